//! DMA engines and queues. (Being written.)
