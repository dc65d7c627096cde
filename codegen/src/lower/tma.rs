//! TMA copies (`cp.async.bulk.tensor`, sm_90a and newer): `tma_load` (global → shared, completing its bytes on
//! an mbarrier), `tma_store` (shared → global, in a bulk group) and `tma_store_wait`.
//!
//! The copies are the program's, not each thread's: lane 0 of one warp issues each box of a block, the warps
//! taking the boxes in turn ([`box_issuers`]). The tensor map of a host descriptor is a 128-byte kernel parameter appended after the IR's
//! arguments (recorded in [`crate::Kernel::tensor_maps`], which the runtime encodes from the descriptor's
//! argument values); its generic address is the copy's tensor operand. A descriptor the program makes once
//! (`tl.make_tensor_descriptor` outside loops and branches) has its map in the program's slot of the kernel's
//! global scratch ([`make_desc`]): the runtime encodes a template parameter from the block, and the kernel
//! copies it there and replaces the address, dims and strides, as Triton does with its `global_scratch`. A block is copied as the boxes of
//! [`tessel_tile::tma::block`], each to where the buffer's layout puts its first element, and the buffer's
//! layout must be the descriptor's TMA layout (that rule's), which the copy writes and reads.

use tessel_tile::Op;
use tessel_tile::ir::{Func, OpData, OpId, ValueId};
use tessel_tile::tma::{self, TmaBlock};

use super::Lower;
use super::asynchronous::first_thread;
use super::tma_issue::{box_addresses, box_copies, copy_issuers};
use crate::ptx::{Operand, Reg, RegClass, instr, mem, mem_off, mem_sym, not, special, sym, vector};
use crate::{CompileError, TensorMapArg};

/// The size of a tensor map (`CUtensorMap`), and of its slot in the global scratch.
pub(crate) const MAP_BYTES: u32 = 128;

/// The TMA block of descriptor `desc`, checked against the layout of the buffer `buf` it is copied to or from.
fn checked_block(l: &Lower, desc: ValueId, buf: ValueId) -> Result<TmaBlock, CompileError> {
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let b = tma::desc_tma_block(l.f, desc)?;
    let (_, _, layout) = l.f.ty(buf).memdesc().expect("verified: a memdesc");
    let want = b.layout.to_linear(block).map_err(|e| CompileError::new(e.to_string()))?;
    // Zero CTA bases (every CTA of a cluster holds the whole block), on either side, leave the layout the same.
    if layout.linear.remove_zero_bases("block") != want.remove_zero_bases("block") {
        return Err(CompileError::new(format!(
            "the buffer {buf} is not in the descriptor's TMA layout (NVMMASharedLayout({}, {}) over {block:?}): \
             TMA writes and reads that layout",
            b.swizzle_bytes(),
            elem.bits()
        )));
    }
    Ok(b)
}

/// The generic address of the tensor map of descriptor `desc`: a host descriptor's kernel parameter (added on
/// first use), or the scratch slot of one the program made ([`make_desc`] put its address in the descriptor's
/// register).
pub(crate) fn tensor_map(l: &mut Lower, desc: ValueId) -> Result<Reg, CompileError> {
    if tma::kernel_desc_maker(l.f, desc).is_some() {
        return l.get(desc)?.first().copied().ok_or_else(|| CompileError::new("the descriptor has no tensor map"));
    }
    let base = tma::host_desc_base(l.f, desc).ok_or_else(|| {
        CompileError::new(
            "a TMA copy needs a descriptor made on the host (a TensorDescriptor argument) or made once per \
             program in the kernel (outside loops and branches)",
        )
    })?;
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let maker = match l.f.value(tma::desc_source(l.f, desc)).def {
        tessel_tile::ir::ValueDef::Result(o, _) => o,
        _ => unreachable!("host_desc_base found its make_tensor_desc"),
    };
    let nan_padding = matches!(&l.f.op(maker).op, tessel_tile::Op::MakeTensorDesc { padding, .. } if padding == "nan");
    let arg = TensorMapArg {
        base_arg: Some(base as u32),
        elem,
        block_shape: block.to_vec(),
        nan_padding,
        im2col_rank: None,
        layout: tma::desc_layout(l.f, desc),
    };
    Ok(map_param(l, arg))
}

/// The `make_tensor_desc`s whose tensor maps the kernel writes into its global scratch: those made once per
/// program (`tma::kernel_desc_maker`) that TMA copies, in program order; the k-th one's slot is at `128 * k` in
/// the program's scratch (in a cluster, in its CTA's part of it: [`make_desc`]).
pub(crate) fn kernel_made_maps(f: &Func) -> Vec<OpId> {
    f.region(f.body)
        .ops
        .iter()
        .copied()
        .filter(|&o| matches!(f.op(o).op, Op::MakeTensorDesc { .. }))
        .filter(|&o| tma::kernel_desc_maker(f, f.op(o).results[0]) == Some(o) && tma::usable(f, f.op(o).results[0]))
        .collect()
}

/// The name of the kernel parameter holding the global scratch's address.
pub(crate) fn scratch_param(kernel: &str) -> String {
    format!("{kernel}_scratch")
}

/// `make_tensor_desc base, shape..., strides...` of a descriptor the program makes once and TMA copies: its
/// tensor map, written into the program's scratch slot (in a cluster, its CTA's own: the CTAs write theirs at the
/// same time), whose generic address becomes the descriptor's value.
///
/// - Every thread checks what TMA needs of the tensor (a 16-byte aligned base, the strides of all but the last
///   dim multiples of 16 bytes, a contiguous last dim) and stops the kernel (`trap`: the launch fails with an
///   illegal-instruction error) when it does not hold, rather than let TMA misread it. The interpreter refuses
///   the same descriptors with a message, as Triton's does. An empty tensor (a dim of 0: `A` and `B` of a
///   matmul with K = 0) is not checked, here or in the interpreter: nothing of it can be misread.
/// - It copies the template parameter the launch encoded from the block (element type, box, swizzle, padding)
///   into the slot, replaces the global address, the dims and the byte strides (`tensormap.replace`, innermost
///   dim first), and releases the writes to the tensormap proxy.
/// - A CTA barrier, then every thread acquires the map (`fence.proxy.tensormap::generic.acquire`); the threads of
///   a `warp_specialize` worker that copies with it, which skipped this code, acquire it where they start
///   (`partitions::lower`: auto mode's producer partitions). Maps made one after the other
///   share one release, barrier and round of acquires, after the last of them (or before the first copy that
///   comes between two makers): each step waits on memory, and a GEMM's three maps took three rounds.
pub(crate) fn make_desc(l: &mut Lower, o: OpId, data: &OpData) -> Result<(), CompileError> {
    need_tma(l)?;
    let desc = data.results[0];
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let (block, rank) = (block.to_vec(), block.len());
    let Op::MakeTensorDesc { padding, .. } = &data.op else { unreachable!("a make_tensor_desc") };
    // The block as each CTA copies it: a block spread over a cluster's CTAs is its part here
    // (`cluster_local::localize`), in the maker's layout without its CTA bases.
    let template = TensorMapArg {
        base_arg: None,
        elem,
        block_shape: block.clone(),
        nan_padding: padding == "nan",
        im2col_rank: None,
        layout: tma::desc_layout(l.f, desc),
    };
    let k = match l.tensor_maps.iter().position(|m| *m == template) {
        Some(k) => k,
        None => {
            l.tensor_maps.push(template);
            l.tensor_maps.len() - 1
        }
    };
    let slot = l.kernel_maps.iter().position(|&m| m == o).expect("a kernel-made map") as u32;
    let base = l.get(data.operands[0])?[0];
    let shape: Vec<Reg> =
        data.operands[1..1 + rank].iter().map(|&v| l.get(v).map(|r| r[0])).collect::<Result<_, _>>()?;
    let strides: Vec<Reg> =
        data.operands[1 + rank..1 + 2 * rank].iter().map(|&v| l.get(v).map(|r| r[0])).collect::<Result<_, _>>()?;

    // The slot: scratch + (linear program id * maps + slot) * 128, generic (for the fence and the copies) and
    // global (for the writes).
    let b = &mut l.b;
    let scratch = b.reg(RegClass::B64);
    b.op("ld.param.u64", scratch, mem_sym(scratch_param(&l.f.name)));
    // The program's id: in a cluster launch (a leader-only auto-mode kernel's) the cluster's.
    let clusters = l.launch_ctas > 1;
    let sregs = [(false, 0), (false, 1), (false, 2), (true, 0), (true, 1)]
        .map(|(count, axis)| super::cluster::program_sreg(clusters, count, axis).expect("axes 0..3"));
    let [x, y, z, nx, ny] = sregs.map(|sr| {
        let r = b.reg(RegClass::B32);
        b.op("mov.u32", r, special(sr));
        r
    });
    let pid = b.reg(RegClass::B32);
    b.op("mad.lo.u32", pid, (z, ny, y));
    b.op("mad.lo.u32", pid, (pid, nx, x));
    // In a cluster, each CTA its own slots: the CTAs of a program write their maps at the same time, and one
    // CTA's copies must not read a map another is still writing.
    if clusters {
        let rank = l.cta_rank();
        l.b.op("mad.lo.u32", pid, (pid, l.launch_ctas, rank));
    }
    let b = &mut l.b;
    let index = b.reg(RegClass::B32);
    b.op("mad.lo.u32", index, (pid, l.kernel_maps.len() as u32, slot));
    let offset = b.reg(RegClass::B64);
    b.op("mul.wide.u32", offset, (index, MAP_BYTES));
    let map = b.reg(RegClass::B64);
    b.op("add.s64", map, (scratch, offset));
    let global = b.reg(RegClass::B64);
    b.op("cvta.to.global.u64", global, map);

    // What TMA needs of the tensor.
    let first = first_thread(l, None)?;
    let b = &mut l.b;
    let bad = b.reg(RegClass::Pred);
    let low = b.reg(RegClass::B64);
    b.op("and.b64", low, (base, 15u32));
    b.op("setp.ne.u64", bad, (low, 0u32));
    for (d, &s) in strides.iter().enumerate() {
        let p = b.reg(RegClass::Pred);
        if d + 1 == rank {
            b.op("setp.ne.s64", p, (s, 1u32));
        } else {
            let bytes = b.reg(RegClass::B64);
            b.op("mul.lo.s64", bytes, (s, elem.bytes()));
            b.op("and.b64", bytes, (bytes, 15u32));
            b.op("setp.ne.u64", p, (bytes, 0u32));
        }
        b.op("or.pred", bad, (bad, p));
    }
    // An empty tensor (a dim of 0, as a K = 0 matmul's operands) has nothing to misread: its map is never used
    // for data, and its strides are whatever the framework made up (torch gives an empty row stride 1).
    for &d in &shape {
        let p = b.reg(RegClass::Pred);
        b.op("setp.lt.s32", p, (d, 1u32));
        b.op("and.pred", bad, (bad, not(p)));
    }
    // `trap`, not `__assertfail`: a call anywhere in the kernel makes ptxas serialize every wgmma (C7510).
    b.comment(
        "tl.make_tensor_descriptor: TMA copies need a 16-byte aligned base, strides that are multiples of 16 bytes \
         in all but the last dim and a contiguous last dim",
    );
    b.emit(instr("trap").guard(bad));

    // The map: template, then the tensor's own address, dims and byte strides.
    let b = &mut l.b;
    let param = super::tma::tensor_map_param(&l.f.name, k);
    for i in 0..MAP_BYTES / 16 {
        let (lo, hi) = (b.reg(RegClass::B64), b.reg(RegClass::B64));
        b.op("ld.param.v2.b64", vector(&[lo, hi]), mem_sym(format!("{param}+{}", 16 * i)));
        b.emit(instr("st.global.v2.b64").guard(first).srcs((mem_off(global, 16 * i as i64), vector(&[lo, hi]))));
    }
    let replace = |f: &str, ty: &str| format!("tensormap.replace.tile.{f}.global.b1024.{ty}");
    b.emit(instr(replace("global_address", "b64")).guard(first).srcs((mem(global), base)));
    for (ord, &d) in shape.iter().rev().enumerate() {
        b.emit(instr(replace("global_dim", "b32")).guard(first).srcs((mem(global), ord as u32, d)));
    }
    for (ord, &s) in strides[..rank - 1].iter().rev().enumerate() {
        let bytes = b.reg(RegClass::B64);
        b.op("mul.lo.s64", bytes, (s, elem.bytes()));
        b.emit(instr(replace("global_stride", "b64")).guard(first).srcs((mem(global), ord as u32, bytes)));
    }
    l.vals.insert(desc, vec![map]);
    l.unpublished_maps.push(map);
    if publish_here(l.f, &l.kernel_maps, o) {
        // One release, one barrier and the acquires for every map written since the last publication.
        l.b.emit(instr("fence.proxy.tensormap::generic.release.gpu").guard(first));
        l.barrier();
        for map in std::mem::take(&mut l.unpublished_maps) {
            l.b.effect("fence.proxy.tensormap::generic.acquire.gpu", (mem(map), MAP_BYTES));
        }
    }
    Ok(())
}

/// Whether the maps written so far must be published after maker `o`: it is the last maker, or a TMA copy comes
/// before the next one (makers sit in the function body, in program order).
fn publish_here(f: &Func, makers: &[OpId], o: OpId) -> bool {
    let Some(next) = makers.iter().position(|&m| m == o).and_then(|i| makers.get(i + 1)) else { return true };
    let ops = &f.region(f.body).ops;
    let (from, to) = (ops.iter().position(|&x| x == o), ops.iter().position(|x| x == next));
    let (Some(from), Some(to)) = (from, to) else { return true };
    let mut copies = false;
    for &x in &ops[from + 1..to] {
        f.walk_op(x, &mut |y| copies |= matches!(f.op(y).op, Op::TmaLoad { .. } | Op::TmaStore));
    }
    copies
}

/// The generic address of the tensor map `arg`, adding its kernel parameter on first use.
///
/// Computed once, at the kernel entry, and made warp-uniform in ptxas's eyes by a shuffle from lane 0 (every
/// lane holds the same address): ptxas then keeps it in uniform registers for the copies' `UTMALDG`/`UTMASTG`.
/// A `cvta.param` at each copy instead left it in a vector register pair, which ptxas offset and moved to
/// uniform registers (`IADD3`, `IMAD.X`, `R2UR`) at every copy, about a dozen vector instructions per K step of
/// a matmul.
fn map_param(l: &mut Lower, arg: TensorMapArg) -> Reg {
    let k = match l.tensor_maps.iter().position(|m| *m == arg) {
        Some(k) => k,
        None => {
            l.tensor_maps.push(arg);
            l.tensor_maps.len() - 1
        }
    };
    if let Some(&r) = l.tensor_map_addrs.get(&k) {
        return r;
    }
    l.b.set_prologue(true);
    let (p, g, u) = (l.b.reg(RegClass::B64), l.b.reg(RegClass::B64), l.b.reg(RegClass::B64));
    l.b.op("mov.b64", p, sym(tensor_map_param(&l.f.name, k)));
    l.b.op("cvta.param.u64", g, p);
    let (lo, hi) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
    l.b.op("mov.b64", vector(&[lo, hi]), g);
    for half in [lo, hi] {
        l.b.op("shfl.sync.idx.b32", half, (half, 0, 31, -1));
    }
    l.b.op("mov.b64", u, vector(&[lo, hi]));
    l.b.set_prologue(false);
    l.tensor_map_addrs.insert(k, u);
    u
}

/// The name of the kernel parameter holding tensor map `k`.
pub(crate) fn tensor_map_param(kernel: &str, k: usize) -> String {
    format!("{kernel}_tmap_{k}")
}

fn need_tma(l: &Lower) -> Result<(), CompileError> {
    if l.arch == tessel_tile::Target::Sm80 {
        return Err(CompileError::new("TMA copies need sm_90a or newer"));
    }
    Ok(())
}

/// `tma_load desc, mem, bar, coords... [, pred] {multicast}`. A multicast load in a cluster is shared by the
/// CTAs that hold the same part of the buffer (all of them for a buffer every CTA holds whole): its boxes are
/// dealt out among them, box `i` issued by the member at position `i % g` of the group of `g`, each with the
/// whole group in its mask, as CUTLASS's multicast pipelines spread a tile's copies over the CTAs that share it.
/// Each box lands at the same shared-memory offset in every member and completes its bytes on every member's
/// barrier at the barrier's offset (`.multicast::cluster`). The barriers must be initialized in every CTA before
/// any CTA copies (see [`super::cluster::multicast_init_point`]).
pub(crate) fn load(l: &mut Lower, data: &OpData, multicast: bool) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf, bar) = (data.operands[0], data.operands[1], data.operands[2]);
    let b = checked_block(l, desc, buf)?;
    let rank = b.box_dims.len();
    let coords = &data.operands[3..3 + rank];
    let map = tensor_map(l, desc)?;
    let mut bar_addr = l.get(bar)?[0];
    let mut op = format!("cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes");
    if tessel_tile::cluster::barrier_ctas(l.f.ty(bar)) == 2 {
        // A two-CTA barrier: each destination's box lands in its own shared memory and completes its bytes on the
        // barrier at this offset in its pair's even CTA (`.cta_group::2`, which lets the barrier be a peer's; the
        // address given is the issuer's pair's, as Triton lowers it).
        op = format!(
            "cp.async.bulk.tensor.{rank}d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        );
        bar_addr = super::asynchronous::lead_barrier(l, bar_addr);
    }
    let group = if multicast { multicast_group(l, buf) } else { None };
    let (position, mask, members) = match group {
        Some(g) => {
            op.push_str(".multicast::cluster");
            (Some(g.position), Some(g.mask), g.members)
        }
        None => (None, None, 1),
    };
    let coords = part_coords(l, coords, buf)?;
    for (i, c) in box_copies(l, data.operands.get(3 + rank).copied(), buf, &b, &coords)?.into_iter().enumerate() {
        let tensor = Operand::TensorAddr { map, coords: c.coords };
        let pred = match position {
            Some(position) => {
                let (mine, p) = (l.b.reg(RegClass::Pred), l.b.reg(RegClass::Pred));
                l.b.op("setp.eq.u32", mine, (position, i as u32 % members));
                l.b.op("and.pred", p, (c.pred, mine));
                p
            }
            None => c.pred,
        };
        match mask {
            Some(mask) => l.b.emit(instr(op.clone()).guard(pred).srcs((mem(c.smem), tensor, mem(bar_addr), mask))),
            None => l.b.emit(instr(op.clone()).guard(pred).srcs((mem(c.smem), tensor, mem(bar_addr)))),
        }
    }
    Ok(())
}

/// The CTAs of a multicast copy into buffer `buf`: those holding the same part of it as this CTA.
pub(crate) struct McastGroup {
    /// This CTA's position among them (0 .. `members`).
    pub position: Reg,
    /// Their 16-bit rank mask (the copy's `.multicast::cluster` operand).
    pub mask: Reg,
    pub members: u32,
}

/// The multicast group of buffer `buf` in this CTA, `None` when no other CTA holds this CTA's part (one CTA, or
/// a buffer the CTAs split along every rank bit): then a multicast copy is an ordinary one.
pub(crate) fn multicast_group(l: &mut Lower, buf: ValueId) -> Option<McastGroup> {
    let n = l.f.config.num_ctas;
    let (group, shared) = sharing(l, buf);
    if n <= 1 || shared == 0 {
        return None;
    }
    let (position, mask) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B16));
    let rank_reg = l.cta_rank();
    if shared == n - 1 {
        // Every CTA holds the whole buffer: the group is the cluster, a CTA's position its rank.
        l.b.op("mov.b32", position, rank_reg);
        l.b.op("mov.b16", mask, group as i64);
    } else {
        // The position gathers the rank's `shared` bits; the group's ranks are its first member's (the rank
        // without those bits) plus each subset of them.
        l.b.op("mov.b32", position, 0u32);
        for (k, bit) in (0..n.trailing_zeros()).filter(|i| shared >> i & 1 != 0).enumerate() {
            let (x, y) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
            l.b.op("bfe.u32", x, (rank_reg, bit, 1u32));
            l.b.op("shl.b32", y, (x, k as u32));
            l.b.op("or.b32", position, (position, y));
        }
        let (first, m32) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
        l.b.op("and.b32", first, (rank_reg, !shared));
        l.b.op("shl.b32", m32, (group, first));
        l.b.op("cvt.u16.u32", mask, m32);
    }
    Some(McastGroup { position, mask, members: 1 << shared.count_ones() })
}

/// The CTAs that hold the same part of buffer `buf` as CTA 0 (a mask of ranks: bit `r` for rank `r`), and the
/// rank bits in which such CTAs differ (the zero CTA bases: every bit of a buffer every CTA holds whole).
fn sharing(l: &Lower, buf: ValueId) -> (u32, u32) {
    let n = l.f.config.num_ctas;
    let shared = match l.cta_parts.get(&buf) {
        Some(bases) => (0..n.trailing_zeros())
            .filter(|&i| bases.get(i as usize).is_none_or(|b| b.iter().all(|&x| x == 0)))
            .fold(0, |m, i| m | 1 << i),
        None => n - 1,
    };
    let group = (0..n).filter(|r| r & !shared == 0).fold(0, |m, r| m | 1 << r);
    (group, shared)
}

/// The registers of a copy's block coordinates: each CTA's part of a buffer spread over the cluster
/// (`cluster_local`) starts at the coordinates plus the part's origin, the XOR (here the sum: the bases are
/// distinct top bits) of the CTA bases of its rank's bits.
fn part_coords(l: &mut Lower, coords: &[ValueId], buf: ValueId) -> Result<Vec<Reg>, CompileError> {
    let mut out = coords.iter().map(|&c| l.get(c).map(|r| r[0])).collect::<Result<Vec<_>, _>>()?;
    let Some(bases) = l.cta_parts.get(&buf).cloned() else { return Ok(out) };
    for (d, r) in out.iter_mut().enumerate() {
        for (i, b) in bases.iter().enumerate().filter(|(_, b)| b[d] != 0) {
            let rank = l.cta_rank();
            let (bit, s) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
            l.b.op("bfe.u32", bit, (rank, i as u32, 1u32));
            l.b.op("mad.lo.s32", s, (bit, b[d], *r));
            *r = s;
        }
    }
    Ok(out)
}

/// `tma_load_im2col desc, mem, bar, coords..., offsets... [, pred] {rank}`: the block's boxes (channels wider
/// than a swizzle row are several boxes side by side, each starting `origin` channels further), each one
/// `cp.async.bulk.tensor.{rank}d...im2col` with the coordinates and the 16-bit offsets innermost first.
pub(crate) fn load_im2col(l: &mut Lower, data: &OpData, rank: usize) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf, bar) = (data.operands[0], data.operands[1], data.operands[2]);
    let b = checked_block(l, desc, buf)?;
    if b.boxes.iter().any(|o| o[0] != 0) {
        return Err(CompileError::new(format!(
            "an im2col load of {} pixels needs more than one box along the pixels ({} each), which continue the \
             pixel walk: not supported yet",
            b.box_dims[0] * b.boxes.len() as u32 / b.boxes.iter().filter(|o| o[0] == 0).count() as u32,
            b.box_dims[0]
        )));
    }
    let (base, _) = tma::host_im2col_base(l.f, desc).ok_or_else(|| {
        CompileError::new("an im2col load needs an im2col descriptor made on the host (a TensorDescriptorIm2Col)")
    })?;
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let maker = match l.f.value(tma::desc_source(l.f, desc)).def {
        tessel_tile::ir::ValueDef::Result(o, _) => o,
        _ => unreachable!("host_im2col_base found its maker"),
    };
    let nan_padding =
        matches!(&l.f.op(maker).op, tessel_tile::Op::MakeTensorDescIm2col { padding, .. } if padding == "nan");
    let arg = TensorMapArg {
        base_arg: Some(base as u32),
        elem,
        block_shape: block.to_vec(),
        nan_padding,
        im2col_rank: Some(rank as u32),
        layout: None,
    };
    let map = map_param(l, arg);
    let coords = &data.operands[3..3 + rank];
    let offsets = &data.operands[3 + rank..3 + 2 * rank - 2];
    let bar_addr = l.get(bar)?[0];
    let dsts = box_addresses(l, buf, &b)?;
    let mut offs = Vec::with_capacity(offsets.len());
    for &o in offsets.iter().rev() {
        let r = l.get(o)?[0];
        if r.class == RegClass::B16 {
            offs.push(r);
        } else {
            let h = l.b.reg(RegClass::B16);
            l.b.op("cvt.u16.u32", h, r);
            offs.push(h);
        }
    }
    let pred = data.operands.get(3 + 2 * rank - 2).copied();
    let issuers = copy_issuers(l, pred, b.boxes.len() as u32)?;
    let op = format!("cp.async.bulk.tensor.{rank}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes");
    for ((origin, dst), p) in b.boxes.iter().zip(dsts).zip(issuers) {
        // The channel coordinate (innermost) moves by the box's channel origin; the pixel walk starts where the
        // load's does.
        let mut c = Vec::with_capacity(rank);
        for (k, &x) in coords.iter().rev().enumerate() {
            let r = l.get(x)?[0];
            if k == 0 && origin[1] != 0 {
                let s = l.b.reg(RegClass::B32);
                l.b.op("add.s32", s, (r, origin[1]));
                c.push(s);
            } else {
                c.push(r);
            }
        }
        let srcs = (mem(dst), Operand::TensorAddr { map, coords: c }, mem(bar_addr), Operand::Vector(offs.clone()));
        l.b.emit(instr(op.clone()).guard(p).srcs(srcs));
    }
    Ok(())
}

/// `tma_store desc, mem, coords...`: the boxes, then one bulk group for them.
pub(crate) fn store(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    need_tma(l)?;
    let (desc, buf) = (data.operands[0], data.operands[1]);
    let b = checked_block(l, desc, buf)?;
    let rank = b.box_dims.len();
    let coords = &data.operands[2..2 + rank];
    let map = tensor_map(l, desc)?;
    let op = format!("cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group");
    // In a cluster each CTA stores its part of a buffer spread over the CTAs; of the CTAs that hold the same
    // part, the first stores it for all of them.
    let owner = (l.f.config.num_ctas > 1).then(|| {
        let (_, shared) = sharing(l, buf);
        let (rank, p, t) = (l.cta_rank(), l.b.reg(RegClass::Pred), l.b.reg(RegClass::B32));
        l.b.op("and.b32", t, (rank, shared));
        l.b.op("setp.eq.u32", p, (t, 0));
        p
    });
    let coords = part_coords(l, coords, buf)?;
    for c in box_copies(l, None, buf, &b, &coords)? {
        let pred = match owner {
            Some(o) => {
                let p = l.b.reg(RegClass::Pred);
                l.b.op("and.pred", p, (c.pred, o));
                p
            }
            None => c.pred,
        };
        l.b.emit(instr(op.clone()).guard(pred).srcs((Operand::TensorAddr { map, coords: c.coords }, mem(c.smem))));
    }
    // Every thread commits (a thread that issued nothing commits an empty group), so that every thread counts
    // the same groups and `tma_store_wait {pending}` means the same in each.
    l.b.emit(instr("cp.async.bulk.commit_group"));
    Ok(())
}

/// `tma_store_wait {pending}`: every thread waits until at most `pending` of its bulk groups still read shared
/// memory (the stores' boxes are issued by several warps); the barrier analysis puts a CTA barrier between that
/// wait and the next write of the buffer.
pub(crate) fn store_wait(l: &mut Lower, pending: u32, writes: bool) -> Result<(), CompileError> {
    need_tma(l)?;
    // `.read`: until the bulk groups have read their shared memory; without it, until their writes are done.
    let op = if writes { "cp.async.bulk.wait_group" } else { "cp.async.bulk.wait_group.read" };
    l.b.emit(instr(op).srcs(pending));
    Ok(())
}
