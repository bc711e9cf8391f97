# Every instruction of the ISA once, on small shapes: two loads from HBM, a matmul overwritten
# and then accumulated in PSUM, a transpose, the vector engine's element-wise, scalar, reduce,
# fill and copy operations, an activation with a row sum, a store back to HBM, GpSimd's iota
# and a counted register loop, and the semaphores that order them. A tour of docs/isa.md, and
# the third base program of the program fuzz pass (tests/assembled_programs_run_bounded.rs).
# Run: trnsim core models/programs/every_instruction.asm
.engine sync
    dma_start q0 hbm 0x0 stride 512 -> sbuf[0:128] +0x0 [128:1] bf16, bytes=256, sem=s0
    dma_start q1 hbm 0x10000 -> sbuf[0:128] +0x1000 [64:1] bf16, sem=s0
    halt

.engine tensor
    sem_wait s0 >= 32
    ldweights sbuf[0:128] +0x0 [128:1] bf16
    matmul sbuf[0:128] +0x1000 [64:1] bf16 -> psum[0:128] bank0 [64:1] fp32, overwrite
    matmul sbuf[0:128] +0x1000 [64:1] bf16 -> psum[0:128] bank0 [64:1] fp32, accumulate
    transpose sbuf[0:32] +0x0 [64:1] bf16 -> psum[0:64] bank2 [32:1] bf16
    sem_inc s1, 1
    halt

.engine vector
    sem_wait s1 >= 1
    tensor_tensor add psum[0:128] bank0 [64:1] fp32, psum[0:128] bank0 [64:1] fp32 -> sbuf[0:128] +0x4000 [64:1] fp32
    tensor_reduce max sbuf[0:128] +0x4000 [64:1] fp32 -> sbuf[0:128] +0x5000 [1:1] fp32
    tensor_scalar mul sbuf[0:128] +0x4000 [64:1] fp32, 0.5 -> sbuf[0:128] +0x5100 [64:1] fp32
    memset 0.0 -> sbuf[0:128] +0x5400 [16:1] fp32
    tensor_copy sbuf[0:128] +0x5100 [2:32, 32:1] fp32 -> sbuf[0:128] +0x5800 [64:1] bf16
    sem_inc s2, 1
    halt

.engine scalar
    sem_wait s2 >= 1
    activation gelu sbuf[0:128] +0x4000 [64:1] fp32 -> sbuf[0:128] +0x6000 [64:1] fp32, scale=1.0, bias=0.0, reduce=add sbuf[0:128] +0x6400 [1:1] fp32
    dma_start q2 sbuf[0:128] +0x6000 [64:1] fp32 -> hbm 0x20000 stride 512, sem=s3
    sem_wait s3 >= 16
    halt

.engine gpsimd
    iota -> sbuf[0:128] +0x7000 [16:1] i32, base=0, step=1, partition_step=16
    reg mov r1, 0
loop:
    reg add r1, r1, 1
    branch lt r1, 3, loop
    sem_set s4 = 1
    halt
