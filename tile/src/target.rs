//! The machine a kernel is compiled for and the options it is compiled with, as typed values that every stage
//! reads from the function ([`crate::Func::target`], [`crate::Func::config`]): layout assignment picks the
//! tensor-core instruction from the target, the scheduler reads `num_stages`, codegen reads both. The text form
//! prints them as the first function attributes (`target = sm_90a, num_warps = 8, ...`).

use std::fmt;

/// A GPU architecture tessel emits code for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// Ampere: `mma.sync`, `cp.async`, `ldmatrix`.
    Sm80,
    /// Hopper with the architecture-specific features: `wgmma`, TMA, mbarrier transactions, clusters.
    Sm90a,
    /// Blackwell datacenter parts: `tcgen05` MMAs into tensor memory, TMA.
    Sm100a,
}

/// The tensor-core instruction family a target offers for `dot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaKind {
    /// Warp-level `mma.sync.m16n8kK`, operands in registers (MMA v2).
    MmaSync,
    /// Warpgroup-level `wgmma.mma_async.m64nNkK`, B (and optionally A) in shared memory (MMA v3).
    Wgmma,
    /// `tcgen05.mma`, accumulator in tensor memory (MMA v5).
    Tcgen05,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::Sm80, Target::Sm90a, Target::Sm100a];

    /// The `.target` name (`sm_90a`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }

    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The target for a device of compute capability `major.minor`: sm_90a on Hopper, sm_100a on Blackwell
    /// datacenter parts, else sm_80 PTX (which the driver JIT-compiles for any newer GPU).
    pub fn for_compute_capability(major: u32, _minor: u32) -> Option<Target> {
        match major {
            9 => Some(Target::Sm90a),
            10 => Some(Target::Sm100a),
            m if m >= 8 => Some(Target::Sm80),
            _ => None,
        }
    }

    /// The lowest PTX ISA version that accepts everything emitted for the target (reference/ptx.md §0).
    pub fn isa_version(self) -> &'static str {
        match self {
            Target::Sm80 => "7.8",
            Target::Sm90a => "8.0",
            Target::Sm100a => "8.6",
        }
    }

    /// Whether the target has TMA (`cp.async.bulk.tensor`) and mbarrier transaction counts: sm_90a and newer.
    pub fn has_tma(self) -> bool {
        !matches!(self, Target::Sm80)
    }

    /// Whether the target has `stmatrix` (sm_90 and newer): a warp writes four 8×8 16-bit matrices from the
    /// registers `mma`/`wgmma` leave them in, one instruction where 32-bit stores take four.
    pub fn has_stmatrix(self) -> bool {
        !matches!(self, Target::Sm80)
    }

    /// The tensor-core instruction family of the target.
    pub fn mma_kind(self) -> MmaKind {
        match self {
            Target::Sm80 => MmaKind::MmaSync,
            Target::Sm90a => MmaKind::Wgmma,
            Target::Sm100a => MmaKind::Tcgen05,
        }
    }

    /// Shared memory one CTA can allocate (bytes, with the opt-in carve-out): 163 KiB on A100, 227 KiB on
    /// H100 and B200.
    pub fn smem_per_block(self) -> u32 {
        match self {
            Target::Sm80 => 163 * 1024,
            Target::Sm90a | Target::Sm100a => 227 * 1024,
        }
    }

    /// Shared memory per SM, shared by the CTAs resident on it (bytes): 164 KiB on A100, 228 KiB on H100 and
    /// B200; each CTA also takes 1 KiB the driver reserves.
    pub fn smem_per_sm(self) -> u32 {
        match self {
            Target::Sm80 => 164 * 1024,
            Target::Sm90a | Target::Sm100a => 228 * 1024,
        }
    }

    /// Threads resident on one SM at most.
    pub fn threads_per_sm(self) -> u32 {
        2048
    }

    /// 32-bit registers per SM (and the most one CTA may use).
    pub fn registers_per_sm(self) -> u32 {
        64 * 1024
    }

    /// The most registers one thread may use.
    pub fn max_registers_per_thread(self) -> u32 {
        255
    }

    /// Streaming multiprocessors of the flagship part (A100 SXM 108, H100 SXM 132, B200 148); the runtime
    /// asks the device for the real count.
    pub fn default_sm_count(self) -> u32 {
        match self {
            Target::Sm80 => 108,
            Target::Sm90a => 132,
            Target::Sm100a => 148,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The options a kernel is compiled with, Triton's compile options: how it is launched (`num_warps`,
/// `num_stages`, `num_ctas`, `maxnreg`) and how its floating-point arithmetic may be rewritten
/// (`enable_fp_fusion`). Two compilations that differ in any of them are different kernels: the specialization
/// that carries this (its `Debug` text) keys the disk cache, and the Python package's launch cache keys on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    /// Warps per CTA: a power of two in 1..=32.
    pub num_warps: u32,
    /// Software-pipelining depth of loops (1: no pipelining).
    pub num_stages: u32,
    /// CTAs per cluster.
    pub num_ctas: u32,
    /// Register cap per thread (`.maxnreg`), when set.
    pub maxnreg: Option<u32>,
    /// Whether `a * b + c` on f32/f64 may become one `fma` (Triton's `enable_fp_fusion`, on by default). Off,
    /// every multiply and add rounds on its own, as the interpreter computes them, so results match it bit for
    /// bit. The text form prints `enable_fp_fusion = false` when off.
    pub fp_fusion: bool,
}

/// A target name tessel does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown target `{}` (expected sm_80, sm_90a or sm_100a)", self.0)
    }
}

impl std::error::Error for UnknownTarget {}

impl std::str::FromStr for Target {
    type Err = UnknownTarget;

    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        Target::parse(s).ok_or_else(|| UnknownTarget(s.into()))
    }
}

/// A per-CTA resource of the target that a kernel may ask too much of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// Bytes of shared memory.
    SharedMemory,
    /// Registers (all the CTA's threads').
    Registers,
    /// Warps.
    Warps,
}

impl Resource {
    /// Its name, as Triton's `OutOfResources` spells it (`shared memory`).
    pub fn name(self) -> &'static str {
        match self {
            Resource::SharedMemory => "shared memory",
            Resource::Registers => "registers",
            Resource::Warps => "warps",
        }
    }
}

/// A kernel needs `needed` of `resource`, more than the `capacity` one CTA may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhausted {
    pub resource: Resource,
    pub needed: u32,
    pub capacity: u32,
}

/// A launch option out of the range the hardware allows ([`KernelConfig::validate`]), with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not a power of two in 1..=32.
    NumWarps(u32),
    /// Zero.
    NumStages,
    /// Not a power of two in 1..=16.
    NumCtas(u32),
    /// Not in 24..=256.
    MaxNReg(u32),
}

impl ConfigError {
    /// The option, as the IR and Python spell it (`num_warps`).
    pub fn option(&self) -> &'static str {
        match self {
            ConfigError::NumWarps(_) => "num_warps",
            ConfigError::NumStages => "num_stages",
            ConfigError::NumCtas(_) => "num_ctas",
            ConfigError::MaxNReg(_) => "maxnreg",
        }
    }

    /// What the option must be, and what it was: `must be a power of two in 1..=32, got 64`.
    pub fn requirement(&self) -> String {
        match self {
            ConfigError::NumWarps(n) => format!("must be a power of two in 1..=32, got {n}"),
            ConfigError::NumStages => "must be at least 1".into(),
            ConfigError::NumCtas(n) => format!("must be a power of two in 1..=16, got {n}"),
            ConfigError::MaxNReg(n) => format!("must be in 24..=256, got {n}"),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.option(), self.requirement())
    }
}

impl std::error::Error for ConfigError {}

impl Default for KernelConfig {
    fn default() -> KernelConfig {
        KernelConfig::DEFAULT
    }
}

impl KernelConfig {
    /// Triton's defaults: 4 warps, 3 stages, 1 CTA, no register cap, fp fusion on. The one place they are
    /// written: the CLI's flags, the elaborator and the Python package (through the native module's
    /// `DEFAULT_LAUNCH`) read them here.
    pub const DEFAULT: KernelConfig =
        KernelConfig { num_warps: 4, num_stages: 3, num_ctas: 1, maxnreg: None, fp_fusion: true };

    /// Checks the values against what the hardware allows.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.num_warps.is_power_of_two() || self.num_warps > 32 {
            return Err(ConfigError::NumWarps(self.num_warps));
        }
        if self.num_stages == 0 {
            return Err(ConfigError::NumStages);
        }
        if !self.num_ctas.is_power_of_two() || self.num_ctas > 16 {
            return Err(ConfigError::NumCtas(self.num_ctas));
        }
        if let Some(n) = self.maxnreg
            && !(24..=256).contains(&n)
        {
            return Err(ConfigError::MaxNReg(n));
        }
        Ok(())
    }

    /// Threads per CTA.
    pub fn threads(&self) -> u32 {
        self.num_warps * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Target::ALL {
            assert_eq!(Target::parse(t.name()), Some(t));
        }
        assert_eq!(Target::parse("sm_90"), None);
        assert_eq!("sm_90".parse::<Target>(), Err(UnknownTarget("sm_90".into())));
    }

    #[test]
    fn config_limits() {
        assert!(KernelConfig::default().validate().is_ok());
        let bad = |c: KernelConfig| c.validate().unwrap_err();
        assert_eq!(bad(KernelConfig { num_warps: 3, ..Default::default() }), ConfigError::NumWarps(3));
        let e = bad(KernelConfig { num_warps: 64, ..Default::default() });
        assert_eq!(e.to_string(), "num_warps must be a power of two in 1..=32, got 64");
        assert_eq!(bad(KernelConfig { maxnreg: Some(300), ..Default::default() }), ConfigError::MaxNReg(300));
        assert_eq!(bad(KernelConfig { num_stages: 0, ..Default::default() }).option(), "num_stages");
    }
}
