// acc_top: acc_core (acc_core.sv) and its limit flags, combinational from the count.
`include "acc_defs.svh"
module acc_top #(
    parameter string MODE = "wrap"
) (
    input  logic       clk_i,
    input  logic       arst_ni,
    input  logic       en,
    input  logic       up,
    input  logic       load,
    input  logic [7:0] din,
    output logic [7:0] count,
    output logic       at_max,
    output logic       at_min
);
    acc_core #(.MODE(MODE)) core (.*);
    assign at_max = count == 8'hff;
    assign at_min = count == 8'h00;
endmodule
