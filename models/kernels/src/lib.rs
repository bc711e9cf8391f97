//! trnsim's kernel library: a workload's ops as per-engine NeuronCore programs (assembly text,
//! docs/isa.md) with semaphores, tiled from the op's shape and the core's SBUF and PSUM, run
//! on every core of one cycle-level chip through its HBM stacks, and memoized by (op, shape,
//! format, chip description).
//!
//! - [`format`]: the matmul formats (bf16, fp16, fp32, fp8 E4M3/E5M2, mxfp8) and a workload
//!   dtype's.
//! - [`gemm`]: the GEMM kernel (the chip benchmarks' program), in any of those formats, MXFP4
//!   weights dequantized on the vector engine.
//! - [`geometry`]: the core figures (array rows and columns, SBUF bytes per partition, PSUM
//!   banks, DMA engines' partitions) the GEMM kernel tiles by, and its SBUF layout.
//! - [`plan`]: a GEMM node of any shape (decode's m = 1..64 too, batched, resident operands)
//!   as tiles of [`gemm`] programs.
//! - [`elementwise`]: activations, norms and softmax as tiles streamed through the vector and
//!   scalar engines.
//! - [`attention`]: flash attention (prefill and decode, GQA) with the online softmax in
//!   SBUF and PSUM, K and V read once.
//! - [`run`]: a kernel's programs on the chip, the op cache, and its threads.
//! - [`disk`]: the op cache on disk (`--op-cache DIR`).
//! - [`cycle`]: `--compute cycle`: a workload's compute nodes timed by these kernels.
#![warn(missing_docs)]

pub mod attention;
pub mod cycle;
pub mod disk;
pub mod elementwise;
pub mod format;
pub mod gemm;
pub mod geometry;
pub mod plan;
pub mod run;
