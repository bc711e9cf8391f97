//! The number formats the kernels' matmuls run in, as the NeuronCore assembly names them, and
//! how a workload's dtype maps onto them.

/// A matmul operand format of the NeuronCore ISA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// BF16 (the default).
    #[default]
    Bf16,
    /// FP16.
    Fp16,
    /// FP32 (the tensor engine takes 4 cycles a column).
    Fp32,
    /// FP8 E4M3 (a workload's `fp8`).
    Fp8e4m3,
    /// FP8 E5M2.
    Fp8e5m2,
    /// MXFP8: FP8 E4M3 elements with one E8M0 scale per 32 K-rows; 4 K-rows per partition.
    Mxfp8,
}

impl Format {
    /// Every format, in the order errors list them.
    pub const ALL: [Format; 6] =
        [Format::Bf16, Format::Fp16, Format::Fp32, Format::Fp8e4m3, Format::Fp8e5m2, Format::Mxfp8];

    /// The format of workload dtype `d` (`fp8` is FP8 E4M3); None for a dtype the ISA has no
    /// matmul operand for (mxfp4, i32, ...).
    pub fn of_dtype(d: &str) -> Option<Format> {
        Some(match d {
            "bf16" => Format::Bf16,
            "fp16" => Format::Fp16,
            "fp32" => Format::Fp32,
            "fp8" | "fp8e4m3" => Format::Fp8e4m3,
            "fp8e5m2" => Format::Fp8e5m2,
            "mxfp8" => Format::Mxfp8,
            _ => return None,
        })
    }

    /// The assembly's name (`bf16`, ..., `mxfp8`), also the core file's format key.
    pub fn asm(self) -> &'static str {
        match self {
            Format::Bf16 => "bf16",
            Format::Fp16 => "fp16",
            Format::Fp32 => "fp32",
            Format::Fp8e4m3 => "fp8e4m3",
            Format::Fp8e5m2 => "fp8e5m2",
            Format::Mxfp8 => "mxfp8",
        }
    }

    /// Bytes per element (an MX format's scales apart).
    pub fn bytes(self) -> u32 {
        match self {
            Format::Bf16 | Format::Fp16 => 2,
            Format::Fp32 => 4,
            Format::Fp8e4m3 | Format::Fp8e5m2 | Format::Mxfp8 => 1,
        }
    }

    /// K-rows one SBUF partition packs for the tensor engine (MXFP8: 4, so K = 512 on a
    /// 128-row array).
    pub fn rows_per_partition(self) -> u32 {
        if self == Format::Mxfp8 {
            4
        } else {
            1
        }
    }

    /// An MX format (block scales travel beside the elements).
    pub fn is_mx(self) -> bool {
        self == Format::Mxfp8
    }
}

/// Elements one MX scale covers (OCP MX v1.0).
pub const MX_BLOCK: u32 = 32;
