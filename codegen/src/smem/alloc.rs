//! The one shared-memory allocator: every `local_alloc` buffer gets an offset from its lifetime, buffers whose
//! lifetimes do not overlap share space, and the scratch of an op that needs some (a layout conversion through
//! shared memory, a reduction or scan across warps, an atomic's broadcast) starts above the buffers live at
//! that op.
//!
//! Lifetimes are intervals over the ops in program order. A buffer lives from its `local_alloc` to its last
//! use; a use inside a loop or branch that the buffer was defined outside of counts as a use at the end of
//! that loop or branch (the buffer must survive every iteration), and a read by `tcgen05.cp` or `tcgen05.mma`
//! lasts until the next mbarrier wait (the tensor cores read it asynchronously). The partitions of a
//! `warp_specialize` run at the same time: a buffer made inside one of them never shares space with a buffer (or
//! scratch) of another, whatever their intervals; within one partition, lifetimes decide as anywhere else (a
//! fused persistent loop's two epilogue branches share their staging buffer's space).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use tessel_layouts::{AnyLayout, LinearLayout, SharedLayout};
use tessel_tile::ir::{Func, OpId, RegionId, ValueId};
use tessel_tile::op_facts::BufferUse;
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

use crate::CompileError;

/// Alignment of buffers whose layout is swizzled for the tensor cores or TMA: the 1024-byte repeat of the
/// 128-byte swizzle, which `wgmma` descriptors assume (base offset 0).
pub const SWIZZLE_ALIGN: u32 = 1024;

/// One buffer: the memdesc value, where it sits, and the op positions it is live over (inclusive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub value: ValueId,
    pub offset: u32,
    pub bytes: u32,
    pub align: u32,
    pub live: (u32, u32),
    /// The partitions it is made in: each enclosing `warp_specialize` and the index of the region holding it.
    pub partitions: Vec<(OpId, usize)>,
}

impl Buffer {
    /// Whether the buffer may be in use at the same time as something live over `live` in `partitions`.
    fn meets(&self, live: (u32, u32), partitions: &[(OpId, usize)]) -> bool {
        let overlap = self.live.0 <= live.1 && live.0 <= self.live.1;
        overlap || concurrent(&self.partitions, partitions)
    }
}

/// Whether code in partitions `a` and code in partitions `b` may run at the same time: they sit in different
/// partitions of one `warp_specialize`.
fn concurrent(a: &[(OpId, usize)], b: &[(OpId, usize)]) -> bool {
    a.iter().any(|&(w, i)| b.iter().any(|&(v, j)| v == w && i != j))
}

/// The partitions region `r` lies in: each enclosing `warp_specialize`, outermost last, with the index of its
/// region that holds `r`.
fn partitions_of(f: &Func, r: RegionId) -> Vec<(OpId, usize)> {
    let mut out = Vec::new();
    let (mut region, mut up) = (r, f.region(r).parent);
    while let Some(p) = up {
        if matches!(f.op(p).op, Op::WarpSpecialize(_)) {
            let i = f.op(p).regions.iter().position(|&x| x == region).expect("a region of its op");
            out.push((p, i));
        }
        let Some(outer) = f.op(p).parent else { break };
        (region, up) = (outer, f.region(outer).parent);
    }
    out
}

/// The offsets of every buffer of a kernel.
#[derive(Clone, Debug, Default)]
pub struct Allocation {
    pub buffers: Vec<Buffer>,
    by_value: HashMap<ValueId, usize>,
    /// The allocation each view (`memdesc_index`, `memdesc_permute`... result) is part of.
    root: HashMap<ValueId, ValueId>,
    /// Program-order position of every op.
    pos: HashMap<OpId, u32>,
    /// The partitions of every op inside a `warp_specialize` ([`partitions_of`]).
    op_partitions: HashMap<OpId, Vec<(OpId, usize)>>,
}

/// Program-order positions of every op, and for each op the last position inside it (itself if it has no
/// regions).
fn positions(f: &Func) -> (HashMap<OpId, u32>, HashMap<OpId, u32>) {
    fn walk(f: &Func, r: RegionId, next: &mut u32, pos: &mut HashMap<OpId, u32>, end: &mut HashMap<OpId, u32>) {
        for &o in &f.region(r).ops {
            pos.insert(o, *next);
            *next += 1;
            for &child in &f.op(o).regions {
                walk(f, child, next, pos, end);
            }
            end.insert(o, *next - 1);
        }
    }
    let (mut pos, mut end) = (HashMap::new(), HashMap::new());
    walk(f, f.body, &mut 0, &mut pos, &mut end);
    (pos, end)
}

fn align_up(x: u32, a: u32) -> u32 {
    x.div_ceil(a) * a
}

impl Allocation {
    /// Lays out every `local_alloc` of `f`.
    pub fn plan(f: &Func) -> Result<Allocation, CompileError> {
        let (pos, end) = positions(f);
        let mut root: HashMap<ValueId, ValueId> = HashMap::new();
        // Buffers seen through a swizzled view: a ring of NVMMA tiles (the pipeliner's rings carry a linear layout
        // over all their buffers; each buffer a wgmma or a TMA copy reads is a view of it).
        let mut swizzled: HashSet<ValueId> = HashSet::new();
        for o in f.all_ops() {
            let d = f.op(o);
            if matches!(d.op, Op::WarpSpecialize(_)) {
                // A worker partition sees the buffers it captures through its region's arguments (the op's
                // operands, in order): the same buffers, for the barrier analysis and the in-flight tracking.
                // (The walk is in program order, so the arguments are mapped before the ops using them.)
                for &r in &d.regions[1..] {
                    for (&a, &c) in f.region(r).args.iter().zip(&d.operands) {
                        if f.ty(c).is_memdesc() {
                            root.insert(a, root.get(&c).copied().unwrap_or(c));
                        }
                    }
                }
            }
            if d.op.is_memdesc_view() {
                let r = root.get(&d.operands[0]).copied().unwrap_or(d.operands[0]);
                root.insert(d.results[0], r);
                if is_nvmma(f.ty(d.results[0])) {
                    swizzled.insert(r);
                }
            }
        }
        let mut buffers = Vec::new();
        for o in f.all_ops() {
            let d = f.op(o);
            if d.op != Op::LocalAlloc {
                continue;
            }
            let v = d.results[0];
            let Type::MemDesc { shape, elem, layout } = f.ty(v) else { unreachable!("verified") };
            let numel: u64 = shape.iter().map(|&x| x as u64).product();
            let bytes = u32::try_from(numel * offsets_per_element(&layout.linear) * elem.bytes() as u64)
                .map_err(|_| CompileError::new(format!("shared-memory buffer {v} is larger than 4 GiB")))?;
            let align = if is_nvmma(f.ty(v)) || swizzled.contains(&v) { SWIZZLE_ALIGN } else { 16 };
            let region = d.parent.expect("linked op");
            let mut last = pos[&o];
            for u in f.all_ops() {
                // A use of a view of the buffer is a use of the buffer.
                if f.op(u).operands.iter().any(|x| *x == v || root.get(x) == Some(&v)) {
                    let at = use_position(f, u, region, &pos, &end).ok_or_else(|| {
                        CompileError::new(format!("shared-memory buffer {v} is used outside the region it is made in"))
                    })?;
                    // Passed to a warp_specialize, the partitions use it (through their arguments) to its end.
                    let at = if matches!(f.op(u).op, Op::WarpSpecialize(_)) { at.max(end[&u]) } else { at };
                    last = last.max(at).max(async_read_end(f, u, region, &pos));
                }
            }
            for r in f.regions.iter().flat_map(|r| &r.args) {
                if *r == v {
                    return Err(CompileError::new("shared-memory buffers cannot be loop-carried yet"));
                }
            }
            let partitions = partitions_of(f, region);
            buffers.push(Buffer { value: v, offset: 0, bytes, align, live: (pos[&o], last), partitions });
        }
        // First fit, the most aligned buffers first (so that small ones, mbarriers, do not leave swizzle-alignment
        // gaps before big ones), each in order of definition: each buffer takes the lowest aligned offset that
        // no buffer placed before it and live at the same time occupies.
        let mut order: Vec<usize> = (0..buffers.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(buffers[i].align), i));
        for (k, &i) in order.iter().enumerate() {
            let (this, align, bytes) = (&buffers[i], buffers[i].align, buffers[i].bytes);
            let mut taken: Vec<(u32, u32)> = order[..k]
                .iter()
                .map(|&j| &buffers[j])
                .filter(|b| b.meets(this.live, &this.partitions))
                .map(|b| (b.offset, b.offset + b.bytes))
                .collect();
            taken.sort();
            let mut at = 0;
            for (s, e) in taken {
                if align_up(at, align) + bytes <= s {
                    break;
                }
                at = at.max(e);
            }
            buffers[i].offset = align_up(at, align);
        }
        let by_value = buffers.iter().enumerate().map(|(i, b)| (b.value, i)).collect();
        let mut op_partitions = HashMap::new();
        for o in f.all_ops() {
            let parts = partitions_of(f, f.op(o).parent.expect("linked op"));
            if !parts.is_empty() {
                op_partitions.insert(o, parts);
            }
        }
        Ok(Allocation { buffers, by_value, root, pos, op_partitions })
    }

    /// The buffer memdesc value `v` is (or, for a `memdesc_index` view, is part of).
    pub fn buffer(&self, v: ValueId) -> Option<&Buffer> {
        let v = self.root.get(&v).copied().unwrap_or(v);
        self.by_value.get(&v).map(|&i| &self.buffers[i])
    }

    /// Where op `o`'s scratch may start: above every buffer live at `o` or made in a partition running beside
    /// `o`'s, 128-byte aligned.
    pub fn scratch_base(&self, o: OpId) -> u32 {
        let Some(&p) = self.pos.get(&o) else { return 0 };
        let parts = self.op_partitions.get(&o).map_or(&[][..], Vec::as_slice);
        let top = self.buffers.iter().filter(|b| b.meets((p, p), parts)).map(|b| b.offset + b.bytes).max();
        align_up(top.unwrap_or(0), 128)
    }

    /// Bytes the buffers need (scratch not included).
    pub fn buffer_bytes(&self) -> u32 {
        self.buffers.iter().map(|b| b.offset + b.bytes).max().unwrap_or(0)
    }

    /// The table `--emit ptx` prints as comments: one line per buffer.
    pub fn table(&self, f: &Func) -> String {
        let mut s = String::new();
        for b in &self.buffers {
            let name = f.value(b.value).name.clone().map_or_else(|| b.value.to_string(), |n| format!("%{n}"));
            let _ = writeln!(
                s,
                "// shared memory: {name} {} bytes at [{}, {}), live over ops {}..={} (align {})",
                b.bytes,
                b.offset,
                b.offset + b.bytes,
                b.live.0,
                b.live.1,
                b.align
            );
        }
        s
    }
}

/// Whether `t` is a memdesc in an NVMMA (swizzled) shared layout.
fn is_nvmma(t: &Type) -> bool {
    matches!(t, Type::MemDesc { layout, .. } if matches!(layout.spec, Some(AnyLayout::Shared(SharedLayout::Nvmma(_)))))
}

/// Where an asynchronous read of a buffer by op `u` in `region` may still be running: a `tcgen05.cp` or
/// `tcgen05.mma` reads its shared-memory operands until a wait observes a commit that tracks it, so the buffer
/// lives up to the first `mbarrier_wait` after `u` (auto mode's MMAs wait right after they issue), or to the
/// region's end when none follows. 0 for every other use (and for one in a nested region, which lives to the
/// end of the op holding it anyway).
fn async_read_end(f: &Func, u: OpId, region: RegionId, pos: &HashMap<OpId, u32>) -> u32 {
    if !matches!(f.op(u).op, Op::Tcgen05Copy | Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. })
        || f.op(u).parent != Some(region)
    {
        return 0;
    }
    let ops = &f.region(region).ops;
    let after = ops.iter().skip_while(|&&x| x != u).skip(1);
    let wait = after.clone().find(|&&x| f.op(x).op == Op::mbarrier_wait());
    wait.or_else(|| ops.last()).map_or(0, |x| pos[x])
}

/// The position of a use by op `u` as seen from `region`: `u`'s own position when it sits in `region`, else the
/// end of the op of `region` that (transitively) contains it.
fn use_position(
    f: &Func,
    mut u: OpId,
    region: RegionId,
    pos: &HashMap<OpId, u32>,
    end: &HashMap<OpId, u32>,
) -> Option<u32> {
    let mut lifted = false;
    loop {
        let r = f.op(u).parent?;
        if r == region {
            return Some(if lifted { end[&u] } else { pos[&u] });
        }
        u = f.region(r).parent?;
        lifted = true;
    }
}

/// The memdesc values an op reads or writes, with whether it writes them: the buffers the op table gives it
/// ([`tessel_tile::op_facts::OpFacts::buffers`]), those that are memdescs (wgmma's A may be a register tensor),
/// and an initialized `local_alloc`'s result, which its value is written into.
pub fn buffer_operands(f: &Func, o: OpId) -> Vec<(ValueId, bool)> {
    let d = f.op(o);
    if d.op == Op::LocalAlloc {
        return if d.operands.is_empty() { Vec::new() } else { vec![(d.results[0], true)] };
    }
    let buffers = d.op.facts().buffers.iter().map(|&(i, u)| (d.operands[i], u == BufferUse::Write));
    buffers.filter(|&(v, _)| f.ty(v).is_memdesc()).collect()
}

/// How many offsets of a shared layout hold one element: 1, or 2 for a padded layout (`fp4_padded`, where each 8
/// bytes of data are followed by 8 of padding), whose buffers take their offsets' bytes.
pub(crate) fn offsets_per_element(linear: &LinearLayout) -> u64 {
    if !linear.has_in_dim("offset") {
        return 1;
    }
    let coords: u64 = linear.out_dim_sizes().iter().map(|&(_, n)| n as u64).product();
    (linear.in_dim_size("offset") as u64 / coords.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_PHASES: &str = "func @k(%x: tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>) {
  %a = local_alloc %x : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  %b = local_alloc %x : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  %u = local_load %a : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  %v = local_load %b : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  %c = local_alloc %u : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  %w = local_load %c : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  return
}
";

    #[test]
    fn buffers_share_space_only_when_their_lifetimes_do_not_overlap() {
        let f = tessel_tile::parse::parse_func(TWO_PHASES).unwrap();
        let a = Allocation::plan(&f).unwrap();
        let offs: Vec<(u32, u32)> = a.buffers.iter().map(|b| (b.offset, b.bytes)).collect();
        // %a and %b are live together; %c is made after %a's last use and takes its place.
        assert_eq!(offs, [(0, 8192), (8192, 8192), (0, 8192)]);
        assert_eq!(a.buffer_bytes(), 16384);
        let load_c = f.all_ops()[5];
        assert_eq!(a.scratch_base(load_c), 8192, "only %c is live at its load");
        assert!(a.table(&f).contains("%a 8192 bytes at [0, 8192)"), "{}", a.table(&f));
    }

    /// A buffer `tcgen05.cp` reads stays allocated until the next mbarrier wait (the copy runs asynchronously):
    /// it lives up to the wait, and a buffer made after the copy but before the wait does not take its bytes.
    #[test]
    fn a_buffer_tcgen05_reads_lives_until_the_next_wait() {
        let f = tessel_tile::parse::parse_func(
            "func @k(%x: tensor<128x4xu8, BlockedLayout([1,4],[32,1],[4,1],[1,0])>, %p: i32) attributes {target = sm_100a} {
  %bar = local_alloc : memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>
  mbarrier_init {count = 1} %bar
  %s = local_alloc %x : memdesc<128x4xu8, SharedLinearLayout([[0,1],[0,2],[32,0],[64,0],[1,0],[2,0],[4,0],[8,0],[16,0]], alignment=128)>
  %t = tmem_alloc : memdesc<128x4xu8, TensorMemoryScalesLayout()>
  tcgen05_copy %s, %t
  %during = local_alloc %x : memdesc<128x4xu8, SharedLinearLayout([[0,1],[0,2],[32,0],[64,0],[1,0],[2,0],[4,0],[8,0],[16,0]], alignment=128)>
  tcgen05_commit %bar
  mbarrier_wait %bar, %p
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        let at = |name: &str| a.buffers.iter().find(|b| f.value(b.value).name.as_deref() == Some(name)).unwrap();
        let (s, during) = (at("s"), at("during"));
        let wait = f.all_ops().iter().position(|&o| f.op(o).op == Op::mbarrier_wait()).unwrap() as u32;
        assert_eq!(s.live, (2, wait), "{}", a.table(&f));
        let apart = during.offset >= s.offset + s.bytes || s.offset >= during.offset + during.bytes;
        assert!(apart, "{}", a.table(&f));
    }

    #[test]
    fn a_ring_of_swizzled_tiles_is_aligned_to_the_swizzle_repeat() {
        // A vector (32 floats) then a ring of two 64x64 tiles the pipeliner made: its own layout is linear, the
        // tiles the wgmma reads through `memdesc_index` are NVMMA-swizzled.
        let f = tessel_tile::parse::parse_func(
            "func @k(%i: i32) attributes {target = sm_90a} {
  %v = local_alloc : memdesc<32xf32, SharedLinearLayout(offset_bases=[[1],[2],[4],[8],[16]])>
  %r = local_alloc : memdesc<2x64x64xf16, SharedLinearLayout(offset_bases=[[0,1,0],[0,2,0],[0,4,0],[0,8,0],[0,16,0],[0,32,0],[0,8,1],[0,16,2],[0,32,4],[0,0,8],[0,0,16],[0,0,32],[1,0,0]])>
  %t = memdesc_index %r, %i : memdesc<64x64xf16, NVMMASharedLayout(128, 16, transposed=True)>
  local_dealloc %v
  local_dealloc %r
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        // The most aligned buffers go first: the ring at 0, the vector after it.
        let placed: Vec<(u32, u32)> = a.buffers.iter().map(|b| (b.offset, b.align)).collect();
        assert_eq!(placed, [(16384, 16), (0, SWIZZLE_ALIGN)], "{}", a.table(&f));
    }

    #[test]
    fn buffers_of_partitions_that_run_at_once_never_share_space() {
        let f = tessel_tile::parse::parse_func(
            "func @k() {
  warp_specialize {worker_num_warps = [4]} {
    %a = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
    yield
  }, {
    %b = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
    yield
  }
  %c = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        let offs: Vec<u32> = a.buffers.iter().map(|b| b.offset).collect();
        // %a and %b each live only at their allocation, but the partitions run at the same time; %c comes after.
        assert_eq!(offs, [0, 8192, 0]);
    }

    #[test]
    fn buffers_of_one_partition_share_space_by_lifetime() {
        // The default partition's two branches (a fused persistent loop's epilogue, taken or not) each stage a
        // tile: one branch runs, so they share space; the worker's buffer runs beside both and shares none.
        let f = tessel_tile::parse::parse_func(
            "func @k(%p: i1) {
  warp_specialize {worker_num_warps = [4]} %p {
    if %p {
      %a = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
      %u = local_load %a : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
      yield
    } else {
      %b = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
      %v = local_load %b : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
      yield
    }
    yield
  }, {
  ^(%r: i1):
    %w = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
    yield
  }
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        let offs: Vec<u32> = a.buffers.iter().map(|b| b.offset).collect();
        assert_eq!(offs, [0, 0, 8192], "{}", a.table(&f));
    }

    #[test]
    fn a_buffer_passed_to_partitions_lives_to_the_end_of_the_op() {
        // The ring reaches the worker through its argument: the default partition's buffer may not take its space.
        let f = tessel_tile::parse::parse_func(
            "func @k() {
  %r = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  warp_specialize {worker_num_warps = [4]} %r {
    %a = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
    yield
  }, {
  ^(%s: memdesc<64x64xf16, NVMMASharedLayout(128, 16)>):
    %u = local_load %s : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
    yield
  }
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        let offs: Vec<u32> = a.buffers.iter().map(|b| b.offset).collect();
        assert_eq!(offs, [0, 8192], "{}", a.table(&f));
    }

    #[test]
    fn swizzled_buffers_are_placed_before_small_ones_leave_gaps() {
        let f = tessel_tile::parse::parse_func(
            "func @k() {
  %m = local_alloc : memdesc<1xi64, SwizzledSharedLayout(1, 1, 1, [0])>
  %a = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  %b = local_alloc : memdesc<64x64xf16, NVMMASharedLayout(128, 16)>
  %u = local_load %a : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  %v = local_load %b : tensor<64x64xf16, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  %w = local_load %m : tensor<1xi64, BlockedLayout([1],[32],[4],[0])>
  return
}
",
        )
        .unwrap();
        let a = Allocation::plan(&f).unwrap();
        let offs: Vec<u32> = a.buffers.iter().map(|b| b.offset).collect();
        // In order of definition the mbarrier-sized %m would push %a and %b to the next 1024-byte boundary.
        assert_eq!(offs, [16384, 0, 8192]);
        assert_eq!(a.buffer_bytes(), 16384 + 8);
    }
}
