//! The memdesc type of a ring of shared-memory buffers: what the pipeliner's load rings, their mbarriers and
//! counters, and the in-flight MMA's barrier pair are allocated as (`expand`, `mma_flight`).

use std::sync::Arc;

use tessel_tile::types::{Layout, Type};

use crate::error::SchedError;

/// The memdesc type of a ring of `n` buffers of type `one`: a leading buffer dim whose offsets come after a
/// whole buffer's.
pub(crate) fn ring_type(one: &Type, n: u32) -> Result<Type, SchedError> {
    let Type::MemDesc { shape, elem, layout } = one else { return Err(SchedError::NotAMemDesc(one.clone())) };
    let lin = &layout.linear;
    let per_buffer = lin.in_dim_size_log2("offset");
    let mut ins = Vec::new();
    for name in lin.in_dim_names() {
        let mut bases: Vec<Vec<u32>> =
            lin.bases(name.as_str()).iter().map(|b| std::iter::once(0).chain(b.iter().copied()).collect()).collect();
        if name.as_str() == "offset" {
            debug_assert_eq!(bases.len() as u32, per_buffer);
            for i in 0..n.next_power_of_two().trailing_zeros() {
                let mut b = vec![0; shape.len() + 1];
                b[0] = 1 << i;
                bases.push(b);
            }
        }
        ins.push((name, bases));
    }
    let mut sizes = vec![n.next_power_of_two()];
    sizes.extend(shape.iter().copied());
    let outs = tessel_layouts::standard_out_dims(sizes.len()).into_iter().zip(sizes.iter().copied());
    let linear = tessel_layouts::LinearLayout::new(ins, outs).map_err(SchedError::Layout)?;
    // The layout spans a power of two of buffers; the type (and the allocation) holds `n` of them.
    sizes[0] = n;
    Ok(Type::MemDesc { shape: sizes.into(), elem: *elem, layout: Arc::new(Layout { spec: None, linear }) })
}
