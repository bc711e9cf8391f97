// acc_defs.svh: the accumulator's step, unless the build defines it (+define+ACC_STEP=N).
`ifndef ACC_DEFS_SVH
`define ACC_DEFS_SVH
`ifndef ACC_STEP
`define ACC_STEP 1
`endif
`endif
