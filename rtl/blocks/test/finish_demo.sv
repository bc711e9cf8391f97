// finish_demo: ends the simulation on command, to test that $finish, $stop and $fatal become
// Rust errors rather than exiting or aborting the process, and that a failing assertion is
// reported by its label. Not a hardware block.
module finish_demo (
    input logic       clk,
    input logic [1:0] cmd,  // 1: $finish, 2: $stop, 3: $fatal
    output logic [7:0] ticks
);
  always_ff @(posedge clk) begin
    ticks <= ticks + 1'b1;
    case (cmd)
      2'd1: $finish;
      2'd2: $stop;
      2'd3: $fatal(1, "finish_demo: fatal on command");
      default: ;
    endcase
  end

  // Fails on the edge where ticks reads 100 (it is 0 after the first edge: x-initial fast).
  a_ticks_not_100: assert property (@(posedge clk) ticks != 8'd100);
endmodule
