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
  // Severities: a warning at 50 and an $info at 60 are counted and the run goes on.
  a_ticks_not_50: assert property (@(posedge clk) ticks != 8'd50) else $warning("ticks reached 50");
  a_ticks_not_60: assert property (@(posedge clk) ticks != 8'd60) else $info("ticks reached 60");
  // Covered once per 256 edges; `phase` is public (peek and force from the testbench).
  logic [3:0] phase /*verilator public_flat_rw*/;
  always_ff @(posedge clk) phase <= phase + 4'd1;
  c_ticks_wrap: cover property (@(posedge clk) ticks == 8'd255);
  c_phase_top: cover property (@(posedge clk) phase == 4'hf);
endmodule
