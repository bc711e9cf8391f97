// acc_core: an 8-bit up/down counter stepping by `ACC_STEP (acc_defs.svh). MODE "sat"
// saturates at 0 and 255, anything else wraps. `load` takes `din` (over en/up). Reset is
// asynchronous and active low (`arst_ni`); the clock is `clk_i`.
`include "acc_defs.svh"
module acc_core #(
    parameter string MODE = "wrap"
) (
    input  logic       clk_i,
    input  logic       arst_ni,
    input  logic       en,
    input  logic       up,
    input  logic       load,
    input  logic [7:0] din,
    output logic [7:0] count
);
    localparam bit SAT = (MODE == "sat");
    logic [8:0] inc, dec;
    assign inc = {1'b0, count} + 9'(`ACC_STEP);
    assign dec = {1'b0, count} - 9'(`ACC_STEP);

    always_ff @(posedge clk_i or negedge arst_ni) begin
        if (!arst_ni) count <= '0;
        else if (load) count <= din;
        else if (en && up) count <= (SAT && inc[8]) ? 8'hff : inc[7:0];
        else if (en) count <= (SAT && dec[8]) ? 8'h00 : dec[7:0];
    end

    // The spec, whatever MODE: counting up never lowers the count. Kept on by the build
    // (--assert); the wrapping build breaks it, and the diff names it by its label.
    a_up_never_wraps: assert property (@(posedge clk_i) disable iff (!arst_ni)
        (en && up && !load) |=> count >= $past(count));
endmodule
