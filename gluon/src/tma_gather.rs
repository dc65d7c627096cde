//! Blackwell's TMA gather and scatter (`triton.experimental.gluon.language.nvidia.blackwell.tma`):
//! `async_gather(tensor_desc, x_offsets, y_offset, barrier, result, pred=True, multicast=False)` reads rows
//! `x_offsets[i]`, columns `y_offset ..` of a 2-d descriptor whose block is `[1, cols]` into row `i` of
//! `result` (completing `len(x_offsets) * tensor_desc.block_type.nbytes` bytes on `barrier`);
//! `async_scatter(tensor_desc, x_offsets, y_offset, src)` writes row `i` of `src` to row `x_offsets[i]`, retired
//! by `store_wait` as a TMA store. They emit `tma_gather` / `tma_scatter` (rules and hardware facts:
//! [`tessel_tile::tma_gather`]).
//!
//! Checked here, at the argument's span: the descriptor (a host one, block `[1, cols]`, rows of at least 32
//! bytes), the row offsets (a 1-d `int32` tensor of at least 8 elements whose layout gives each warp's lanes the
//! same groups of four consecutive indices in consecutive registers), and the buffer (`[len(x_offsets), cols]`
//! of the descriptor's dtype in the descriptor's layout). The target (sm_100a only) is checked once the
//! kernel's target is known (`tessel_tile::tma_gather::check_target`), at the call's span too.
//!
//! In a cluster, `result` may be split over the CTAs along its rows (a `cga_layout`, as example 05's activation
//! tile is over a CTA pair): each CTA gathers the rows of its part from the indices it holds, so `x_offsets` must
//! be split as the rows are (`tessel_tile::tma_gather::cluster_problem`, checked at `x_offsets`). `multicast=True`
//! (a constexpr bool) lets the CTAs holding the same part share one gather of its rows; where no two CTAs hold the
//! same part, or in a one-CTA program, it is an ordinary gather, as in Triton.

use tessel_lang::elab::builtins::{Arg, Bound};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_tile::ops::Op;
use tessel_tile::{ScalarType, Type};

use crate::blackwell::BLACKWELL_TMA;
use crate::smem::memdesc_arg;

const GATHER_SIG: &str = "tensor_desc, x_offsets, y_offset, barrier, result, pred=True, multicast=False";
const SCATTER_SIG: &str = "tensor_desc, x_offsets, y_offset, src";

pub fn register(r: &mut Registry) {
    r.add(BLACKWELL_TMA, "async_gather", Handler::Bound(GATHER_SIG, gather));
    r.add(BLACKWELL_TMA, "async_scatter", Handler::Bound(SCATTER_SIG, scatter));
}

/// The row offsets: a 1-d int32 tensor in a layout gather4/scatter4 can issue from.
fn row_offsets<'a>(e: &mut Elab<'a>, b: &Bound<'a>) -> R<Tv> {
    let a = b.req("x_offsets");
    let x = e.tensor_arg(a, &b.fname, "x_offsets")?;
    if x.ty.shape().len() != 1 || x.scalar() != Some(ScalarType::I32) {
        return Err(e.err(a.span, format!("`x_offsets` of `{}` must be a 1-d int32 tensor, got {}", b.fname, x.ty)));
    }
    let rows = x.ty.shape()[0];
    if rows < tessel_tile::tma_gather::MIN_ROWS || !rows.is_power_of_two() {
        return Err(e.err(
            a.span,
            format!(
                "`{}` moves a power of two of at least {} rows, but `x_offsets` has {rows}",
                b.fname,
                tessel_tile::tma_gather::MIN_ROWS
            ),
        ));
    }
    let Some(layout) = x.ty.layout() else {
        return Err(e.err(a.span, format!("`x_offsets` of `{}` needs a layout", b.fname)));
    };
    if let Some(problem) = tessel_tile::tma_gather::index_layout_problem(&layout.linear) {
        return Err(e.err_hint(
            a.span,
            format!("the layout of `x_offsets` cannot feed `{}`: {problem}", b.fname),
            "convert it to gl.SliceLayout(0, gl.BlockedLayout([1, 4], [32, 1], [1, num_warps], [1, 0]))",
        ));
    }
    Ok(x)
}

/// The `y_offset`: an integer scalar, as i32.
fn column<'a>(e: &mut Elab<'a>, b: &Bound<'a>) -> R<Tv> {
    let a = b.req("y_offset");
    let y = e.to_tensor(&a.value, a.span)?;
    if y.is_block() || !y.scalar().is_some_and(ScalarType::is_int) {
        return Err(e.err(a.span, format!("`y_offset` of `{}` must be an integer scalar, got {}", b.fname, y.ty)));
    }
    e.cast(y, Dtype::Scalar(ScalarType::I32), a.span)
}

/// The descriptor (a host one with a `[1, cols]` block) and the buffer type its rows land in.
fn descriptor<'a>(e: &mut Elab<'a>, b: &Bound<'a>, rows: u32) -> R<(Tv, Type)> {
    let (desc, elem, block) = crate::tma::descriptor(e, b)?;
    let a = b.req("tensor_desc");
    let mut v = desc.v;
    while let Some(&outer) = e.worker_args.get(&v) {
        v = outer;
    }
    let layout = tessel_tile::tma::desc_layout(&e.func, v);
    let ty = tessel_tile::tma_gather::buffer_type(elem, &block, layout.as_ref(), rows)
        .map_err(|m| e.err(a.span, format!("`{}` cannot use this descriptor: {m}", b.fname)))?;
    Ok((desc, ty))
}

/// The shared-memory buffer (`what`), which must be of type `want`.
fn buffer<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str, want: &Type) -> R<Tv> {
    let mem = memdesc_arg(e, a, fname, what)?;
    let (shape, elem, layout) = mem.ty.memdesc().expect("a memdesc");
    let (want_shape, want_elem, want_layout) = want.memdesc().expect("a memdesc");
    if shape != want_shape || elem != want_elem {
        return Err(e.err(
            a.span,
            format!(
                "`{what}` of `{fname}` must hold one row per offset ({} {want_shape:?}), got {} {shape:?}",
                want_elem.triton_name(),
                elem.triton_name()
            ),
        ));
    }
    if layout.linear != want_layout.linear {
        return Err(e.err_hint(
            a.span,
            format!("`{what}` of `{fname}` is not in the descriptor's layout, which TMA writes and reads"),
            "allocate it with `gl.allocate_shared_memory(desc.dtype, [len(x_offsets), cols], desc.layout)`",
        ));
    }
    Ok(mem)
}

fn gather<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let x = row_offsets(e, &b)?;
    let (desc, want) = descriptor(e, &b, x.ty.shape()[0])?;
    let y = column(e, &b)?;
    let bar = crate::tma::barrier_arg(e, &b)?;
    let result = buffer(e, b.req("result"), &b.fname, "result", &want)?;
    cluster_split(e, &b, &x, &result)?;
    let multicast = multicast(e, &b)?;
    let mut operands = vec![desc, result, bar, x, y];
    match crate::mbarrier::pred(e, b.req("pred"), &b.fname)? {
        None => return Ok(Value::None),
        Some(None) => {}
        Some(Some(p)) => operands.push(p),
    }
    e.emit(Op::TmaGather { multicast }, &operands, vec![], b.span)?;
    Ok(Value::None)
}

/// In a cluster, each CTA gathers the rows of its part of `result` from the indices it holds
/// ([`tessel_tile::tma_gather::cluster_problem`]).
fn cluster_split<'a>(e: &Elab<'a>, b: &Bound<'a>, x: &Tv, result: &Tv) -> R<()> {
    let n = e.func.config.num_ctas;
    let (Some(xl), Some((_, _, bl))) = (x.ty.layout(), result.ty.memdesc()) else { return Ok(()) };
    match tessel_tile::tma_gather::cluster_problem(&xl.linear, &bl.linear, n) {
        None => Ok(()),
        Some(problem) => {
            Err(e.err(b.req("x_offsets").span, format!("`{}` in a cluster of {n} CTAs: {problem}", b.fname)))
        }
    }
}

/// `multicast=True` (a constexpr bool): in a cluster, the CTAs that hold the same part of `result` share its rows
/// (each row gathered once, landing in all of them); in a one-CTA program it is an ordinary gather, as in Triton.
fn multicast<'a>(e: &mut Elab<'a>, b: &Bound<'a>) -> R<bool> {
    let Some(a) = b.opt("multicast") else { return Ok(false) };
    Ok(e.const_bool(a, &b.fname, "multicast")? && e.func.config.num_ctas > 1)
}

fn scatter<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let x = row_offsets(e, &b)?;
    let (desc, want) = descriptor(e, &b, x.ty.shape()[0])?;
    let y = column(e, &b)?;
    let src = buffer(e, b.req("src"), &b.fname, "src", &want)?;
    e.emit(Op::TmaScatter, &[desc, src, x, y], vec![], b.span)?;
    Ok(Value::None)
}
