//! Instruction set data types, modelled on the NKI ISA (spec §2, §5; A8/A9).

use serde::{Deserialize, Serialize};
use std::fmt;

/// An engine with its own sequencer and instruction stream (spec §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Engine {
    /// Tensor engine (PE array): matmul, transpose. Reads SBUF, writes PSUM only.
    Tensor,
    /// Vector engine (DVE).
    Vector,
    /// Scalar engine (ACT): activation functions.
    Scalar,
    /// GpSimd (POOL): iota, general-purpose SIMD. Cannot touch PSUM.
    GpSimd,
    /// Sync engine: a sequencer without a datapath, mostly starting DMAs.
    Sync,
}

impl Engine {
    /// Every engine, in stream order.
    pub const ALL: [Engine; 5] = [Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd, Engine::Sync];

    /// The name used in assembly (`.engine tensor`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Tensor => "tensor",
            Engine::Vector => "vector",
            Engine::Scalar => "scalar",
            Engine::GpSimd => "gpsimd",
            Engine::Sync => "sync",
        }
    }

    /// Parses [`Engine::name`].
    pub fn from_name(s: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// Element data types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dtype {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    Fp16,
    /// IEEE single.
    Fp32,
    /// FP8 E4M3 (OCP, finite-only, max 448).
    Fp8E4m3,
    /// FP8 E5M2 (OCP).
    Fp8E5m2,
    /// MXFP8 E4M3 elements with one E8M0 scale per 32 elements along the contraction axis
    /// (OCP MX); the scales live in a separate access pattern.
    MxFp8E4m3,
    /// 32-bit signed integer (iota, registers).
    I32,
}

impl Dtype {
    /// Every data type.
    pub const ALL: [Dtype; 7] =
        [Dtype::Bf16, Dtype::Fp16, Dtype::Fp32, Dtype::Fp8E4m3, Dtype::Fp8E5m2, Dtype::MxFp8E4m3, Dtype::I32];

    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::Bf16 | Dtype::Fp16 => 2,
            Dtype::Fp32 | Dtype::I32 => 4,
            Dtype::Fp8E4m3 | Dtype::Fp8E5m2 | Dtype::MxFp8E4m3 => 1,
        }
    }

    /// The name used in assembly.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp32 => "fp32",
            Dtype::Fp8E4m3 => "fp8e4m3",
            Dtype::Fp8E5m2 => "fp8e5m2",
            Dtype::MxFp8E4m3 => "mxfp8",
            Dtype::I32 => "i32",
        }
    }

    /// Parses [`Dtype::name`].
    pub fn from_name(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// On-chip memories an instruction can address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mem {
    /// State buffer: 128 partitions x 192/224/256 KiB.
    Sbuf,
    /// Partial-sum buffer: 128 partitions x 8 banks x 2 KiB.
    Psum,
}

/// One free-axis dimension: `size` elements, `stride` in elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim {
    /// Elements along this dimension (u16 in the hardware).
    pub size: u16,
    /// Step between consecutive elements, in elements (i16 in the hardware).
    pub stride: i16,
}

/// An access pattern: a partition range plus up to four free-axis dimensions (innermost last),
/// starting `offset` bytes into each partition (for PSUM, bank b starts at b x 2048).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ap {
    /// Which memory.
    pub mem: Mem,
    /// First partition.
    pub partition_start: u16,
    /// Number of partitions (1..=128).
    pub partitions: u16,
    /// Byte offset within each partition.
    pub offset: u32,
    /// Free-axis dimensions, outermost first; only the first `ndims` are used.
    pub dims: [Dim; 4],
    /// Number of dimensions in use (1..=4).
    pub ndims: u8,
    /// Element type.
    pub dtype: Dtype,
}

impl Ap {
    /// The dimensions in use, outermost first.
    pub fn dims(&self) -> &[Dim] {
        &self.dims[..(self.ndims as usize).min(4)]
    }
    /// Elements per partition (the product of the sizes): the "N" of the cost model. Cannot
    /// overflow: four u16 sizes fit in u64.
    pub fn free_elems(&self) -> u64 {
        self.dims().iter().map(|d| d.size as u64).product()
    }
    /// Bytes moved over all partitions (saturating: a legal stride-0 pattern of four 65535
    /// dimensions on 128 partitions exceeds u64).
    pub fn bytes(&self) -> u64 {
        self.free_elems().saturating_mul(self.partitions as u64).saturating_mul(self.dtype.bytes() as u64)
    }
    /// Columns of this pattern as a matmul operand (M of a stationary, N of a moving tensor):
    /// MXFP8 packs four K-rows per partition (K = 512), so its free axis holds 4 x columns
    /// elements; other types hold one column per element.
    pub fn matmul_columns(&self) -> u64 {
        if self.dtype == Dtype::MxFp8E4m3 {
            self.free_elems() / 4
        } else {
            self.free_elems()
        }
    }
    /// Stride of the innermost dimension with more than one element, in bytes (0 if none).
    pub fn innermost_stride_bytes(&self) -> u64 {
        self.dims()
            .iter()
            .rev()
            .find(|d| d.size > 1)
            .map_or(0, |d| d.stride.unsigned_abs() as u64 * self.dtype.bytes() as u64)
    }
}

/// Activation functions of the scalar engine (a subset of `nki.language` activations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ActFn {
    /// f(x) = x.
    Identity,
    /// e^x.
    Exp,
    /// GELU (tanh approximation).
    Gelu,
    /// x * sigmoid(x).
    Silu,
    /// tanh(x).
    Tanh,
    /// 1 / (1 + e^-x).
    Sigmoid,
    /// 1 / sqrt(x).
    Rsqrt,
    /// max(x, 0).
    Relu,
    /// x^2.
    Square,
    /// ln(x).
    Log,
}

impl ActFn {
    /// Every function.
    pub const ALL: [ActFn; 10] = [
        ActFn::Identity,
        ActFn::Exp,
        ActFn::Gelu,
        ActFn::Silu,
        ActFn::Tanh,
        ActFn::Sigmoid,
        ActFn::Rsqrt,
        ActFn::Relu,
        ActFn::Square,
        ActFn::Log,
    ];
    /// The name used in assembly.
    pub fn name(self) -> &'static str {
        match self {
            ActFn::Identity => "identity",
            ActFn::Exp => "exp",
            ActFn::Gelu => "gelu",
            ActFn::Silu => "silu",
            ActFn::Tanh => "tanh",
            ActFn::Sigmoid => "sigmoid",
            ActFn::Rsqrt => "rsqrt",
            ActFn::Relu => "relu",
            ActFn::Square => "square",
            ActFn::Log => "log",
        }
    }
    /// Parses [`ActFn::name`].
    pub fn from_name(s: &str) -> Option<ActFn> {
        ActFn::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// Element-wise binary operations (vector engine ALU; also reductions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AluOp {
    /// a + b.
    Add,
    /// a - b.
    Sub,
    /// a * b.
    Mul,
    /// max(a, b).
    Max,
    /// min(a, b).
    Min,
    /// a / b.
    Div,
}

impl AluOp {
    /// Every operation.
    pub const ALL: [AluOp; 6] = [AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Max, AluOp::Min, AluOp::Div];
    /// The name used in assembly.
    pub fn name(self) -> &'static str {
        match self {
            AluOp::Add => "add",
            AluOp::Sub => "sub",
            AluOp::Mul => "mul",
            AluOp::Max => "max",
            AluOp::Min => "min",
            AluOp::Div => "div",
        }
    }
    /// Parses [`AluOp::name`].
    pub fn from_name(s: &str) -> Option<AluOp> {
        AluOp::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// A scalar register of a sequencer (64 x 32 bit per sequencer, spec §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reg(pub u8);

/// A semaphore of the core (64 per core, spec §10 estimate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sem(pub u8);

/// A register-or-immediate operand of the register ALU and branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// A register's value.
    Reg(Reg),
    /// A constant.
    Imm(i32),
}

/// Register ALU operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RegOp {
    /// dst = a.
    Mov,
    /// dst = a + b.
    Add,
    /// dst = a - b.
    Sub,
    /// dst = a * b.
    Mul,
}

/// Branch conditions comparing two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cond {
    /// Always taken.
    Always,
    /// a == b.
    Eq,
    /// a != b.
    Ne,
    /// a < b (signed).
    Lt,
    /// a >= b (signed).
    Ge,
}

/// PSUM accumulation control of a matmul (spec §2: every PSUM write overwrites or accumulates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Accumulate {
    /// Overwrite the destination (start of an accumulation group).
    Overwrite,
    /// Add into the destination.
    Accumulate,
}

/// An address in HBM or on chip for a DMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DmaAddr {
    /// `bytes_per_partition` contiguous bytes at `addr` + p x `partition_stride` for each
    /// partition p of the on-chip side (a 2-D DMA: rows of HBM onto partitions).
    Hbm {
        /// Byte address of the first row.
        addr: u64,
        /// Bytes between consecutive rows.
        partition_stride: u64,
    },
    /// An on-chip access pattern.
    OnChip(Ap),
}

/// One instruction. Costs are in the executing engine's cycles (spec §5, `crate::cost`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Instr {
    /// Tensor: load the stationary matrix [K partitions x M columns] into the PE array.
    LoadStationary {
        /// K partitions x M (<= 128) elements.
        src: Ap,
        /// MXFP8 only: one E8M0 scale byte per 32 elements along K (K/32 partitions x M).
        scales: Option<Ap>,
    },
    /// Tensor: stream the moving matrix [K partitions x N columns] through the array, writing
    /// stationary.T @ moving ([M partitions x N]) to PSUM.
    MultiplyMoving {
        /// K partitions x N elements.
        src: Ap,
        /// MXFP8 only: one E8M0 scale byte per 32 elements along K (K/32 partitions x N).
        scales: Option<Ap>,
        /// M partitions x N FP32 (or BF16 on v4) elements in PSUM.
        dst: Ap,
        /// Overwrite or accumulate.
        acc: Accumulate,
    },
    /// Tensor: transpose [P x F] into [F x P] through the array (identity matmul).
    Transpose {
        /// Source.
        src: Ap,
        /// Destination (PSUM).
        dst: Ap,
    },
    /// Vector: dst = a op b, element-wise.
    TensorTensor {
        /// Operation.
        op: AluOp,
        /// First input.
        a: Ap,
        /// Second input.
        b: Ap,
        /// Output.
        dst: Ap,
    },
    /// Vector or scalar: dst = src op imm.
    TensorScalar {
        /// Operation.
        op: AluOp,
        /// Input.
        src: Ap,
        /// The scalar.
        imm: f32,
        /// Output.
        dst: Ap,
    },
    /// Scalar: dst = f(src * scale + bias), optionally also reducing each partition's results
    /// into `reduce` with `reduce_op` (activation_reduce).
    Activation {
        /// Function.
        func: ActFn,
        /// Input.
        src: Ap,
        /// Output.
        dst: Ap,
        /// Multiplier applied before the function.
        scale: f32,
        /// Added before the function.
        bias: f32,
        /// Optional per-partition reduction of the outputs: (operation, 1 element per partition).
        reduce: Option<(AluOp, Ap)>,
    },
    /// Vector: reduce each partition's free axis into one element.
    TensorReduce {
        /// Operation (add, max, min, mul).
        op: AluOp,
        /// Input.
        src: Ap,
        /// Output: one element per partition.
        dst: Ap,
    },
    /// Vector (NC-v4 and later: `costs.vector.quantize_mx`): quantizes a BF16/FP16 operand
    /// laid out as an MXFP8 one (4 K-rows per partition, K = 4 x partitions, row k =
    /// j x partitions + p at free index j x columns + c of partition p) to MXFP8: for each
    /// block of 32 K-rows of a column, its E8M0 scale (from the block's largest magnitude) into
    /// `scales` and the elements divided by it and cast to E4M3 into `dst` (nki.isa.quantize_mx).
    QuantizeMx {
        /// BF16 or FP16 input, partitions a multiple of 32, elements a multiple of 4.
        src: Ap,
        /// MXFP8 output, `src`'s shape.
        dst: Ap,
        /// One byte per block: partitions / 8 partitions x columns (the `scales=` layout of a
        /// matmul).
        scales: Ap,
    },
    /// Vector, scalar or GpSimd: dst = src (with a cast to dst's type).
    TensorCopy {
        /// Input.
        src: Ap,
        /// Output.
        dst: Ap,
    },
    /// Vector or GpSimd: fill dst with a value.
    Memset {
        /// Output.
        dst: Ap,
        /// Value.
        value: f32,
    },
    /// GpSimd: `dst[p][i] = base + p * partition_step + i * step` (in element order).
    Iota {
        /// Output.
        dst: Ap,
        /// Value of element 0 of partition 0.
        base: i32,
        /// Increment per element along the free axis.
        step: i32,
        /// Increment per partition.
        partition_step: i32,
    },
    /// Start a DMA on `queue` of the core's DMA engines: `bytes_per_partition` bytes per
    /// partition of the on-chip side; when done, add 1 to `sem` (if any).
    DmaStart {
        /// Queue (0..16).
        queue: u8,
        /// Source.
        src: DmaAddr,
        /// Destination.
        dst: DmaAddr,
        /// Bytes per partition.
        bytes_per_partition: u32,
        /// Semaphore incremented on completion.
        sem: Option<Sem>,
    },
    /// Wait until `sem` >= `value`.
    SemWait {
        /// Semaphore.
        sem: Sem,
        /// Threshold.
        value: u32,
    },
    /// Set `sem` to `value`.
    SemSet {
        /// Semaphore.
        sem: Sem,
        /// Value.
        value: u32,
    },
    /// Add `delta` to `sem` (signal).
    SemInc {
        /// Semaphore.
        sem: Sem,
        /// Increment.
        delta: u32,
    },
    /// Register ALU: dst = a op b.
    RegAlu {
        /// Operation.
        op: RegOp,
        /// Destination register.
        dst: Reg,
        /// First operand.
        a: Operand,
        /// Second operand (ignored by Mov).
        b: Operand,
    },
    /// Branch to instruction index `target` if `a cond b`.
    Branch {
        /// Condition.
        cond: Cond,
        /// First operand.
        a: Operand,
        /// Second operand.
        b: Operand,
        /// Instruction index in the same stream.
        target: u32,
    },
    /// Stop this engine's stream.
    Halt,
}

impl Instr {
    /// The assembly mnemonic.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Instr::LoadStationary { .. } => "ldweights",
            Instr::MultiplyMoving { .. } => "matmul",
            Instr::Transpose { .. } => "transpose",
            Instr::TensorTensor { .. } => "tensor_tensor",
            Instr::TensorScalar { .. } => "tensor_scalar",
            Instr::Activation { .. } => "activation",
            Instr::TensorReduce { .. } => "tensor_reduce",
            Instr::TensorCopy { .. } => "tensor_copy",
            Instr::QuantizeMx { .. } => "quantize_mx",
            Instr::Memset { .. } => "memset",
            Instr::Iota { .. } => "iota",
            Instr::DmaStart { .. } => "dma_start",
            Instr::SemWait { .. } => "sem_wait",
            Instr::SemSet { .. } => "sem_set",
            Instr::SemInc { .. } => "sem_inc",
            Instr::RegAlu { .. } => "reg",
            Instr::Branch { .. } => "branch",
            Instr::Halt => "halt",
        }
    }

    /// Which engines may execute it (spec §2/§3 access rules are checked separately).
    pub fn engines(&self) -> &'static [Engine] {
        use Engine::*;
        match self {
            Instr::LoadStationary { .. } | Instr::MultiplyMoving { .. } | Instr::Transpose { .. } => &[Tensor],
            Instr::TensorTensor { .. } | Instr::TensorReduce { .. } => &[Vector, GpSimd],
            Instr::TensorScalar { .. } => &[Vector, Scalar, GpSimd],
            Instr::Activation { .. } => &[Scalar],
            Instr::QuantizeMx { .. } => &[Vector],
            Instr::TensorCopy { .. } => &[Vector, Scalar, GpSimd],
            Instr::Memset { .. } => &[Vector, GpSimd],
            Instr::Iota { .. } => &[GpSimd],
            Instr::DmaStart { .. } => &[Sync, Scalar, GpSimd],
            _ => &[Tensor, Vector, Scalar, GpSimd, Sync],
        }
    }
}

/// One engine's program: its instructions, and for each the source line (for errors).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stream {
    /// Instructions, in order.
    pub instrs: Vec<Instr>,
    /// Source line of each instruction (1-based).
    pub lines: Vec<u32>,
}

/// A whole core's program: one stream per engine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Where it came from (a file name), for errors.
    pub source: String,
    /// Streams by engine; an engine without one stays idle.
    pub streams: Vec<(Engine, Stream)>,
}

impl Program {
    /// The stream of `e`, if any.
    pub fn stream(&self, e: Engine) -> Option<&Stream> {
        self.streams.iter().find(|(x, _)| *x == e).map(|(_, s)| s)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
