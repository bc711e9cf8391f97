# Row softmax pieces over a 128 x 512 fp32 tile loaded from HBM: the vector engine takes row
# maxima, then the scalar engine exp(x) with row sums. A full softmax subtracts each row's
# maximum before exp; `activation`'s bias is one immediate for all rows, so this program does
# not (it shows the engines' timing and the semaphore hand-off, not numerically stable output).
# Run: trnsim core models/programs/softmax_rows.asm
.engine sync
    dma_start q0 hbm 0x0 stride 2048 -> sbuf[0:128] +0x0 [512:1] fp32, bytes=2048, sem=s0
    halt

.engine vector
    sem_wait s0 >= 16
    tensor_reduce max sbuf[0:128] +0x0 [512:1] fp32 -> sbuf[0:128] +0x800 [1:1] fp32
    sem_inc s1, 1
    halt

.engine scalar
    sem_wait s1 >= 1
    activation exp sbuf[0:128] +0x0 [512:1] fp32 -> sbuf[0:128] +0x1000 [512:1] bf16, scale=1.0, bias=0.0, reduce=add sbuf[0:128] +0x1400 [1:1] fp32
    halt
