//! How a distributed tensor meets a shared layout: register `r` of thread (lane, warp) holds the element at
//! `D(r, lane, warp)`, which a buffer of shared layout `S` keeps at offset `S⁻¹(D(r, lane, warp))`. The
//! composition is linear, so an access is the XOR of a per-thread part and a per-register constant, and runs
//! of registers at consecutive offsets can move as one vector. Codegen lowers `local_load`/`local_store` and
//! `cp.async` with these maps; the pipeliner asks [`contiguous_run`] whether `cp.async` can copy a load.

use tessel_layouts::LinearLayout;

/// A shared layout that does not hold a tensor's elements ([`offsets`]), with the layouts crate's reason.
#[derive(Clone, Debug, PartialEq)]
pub struct NotHeld(pub tessel_layouts::LayoutError);

impl std::fmt::Display for NotHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the shared layout does not hold the tensor's elements: {}", self.0)
    }
}

impl std::error::Error for NotHeld {}

/// The map from (register, lane, warp) of `dist` to the buffer offset (in elements) of `shared`.
pub fn offsets(dist: &LinearLayout, shared: &LinearLayout) -> Result<LinearLayout, NotHeld> {
    dist.invert_and_compose(shared).map_err(NotHeld)
}

/// The offset of register `r` at lane = warp = 0.
pub fn reg_offset(map: &LinearLayout, r: u32) -> u32 {
    map.apply_named(&[("register", r)])[0].1
}

/// The widest run length `v` (a power of two, at most 16 bytes of `elem_bytes` elements, at most `n` registers)
/// such that every aligned run of `v` registers sits at `v` consecutive, `v`-aligned offsets whatever the thread.
pub fn contiguous_run(map: &LinearLayout, n: u32, elem_bytes: u32) -> u32 {
    let thread: Vec<u32> = ["lane", "warp"]
        .iter()
        .filter(|d| map.has_in_dim(d))
        .flat_map(|d| map.bases(d).iter().map(|b| b[0]).collect::<Vec<u32>>())
        .collect();
    let mut v = (16 / elem_bytes).min(n).max(1);
    while v > 1 {
        let runs = (0..n).step_by(v as usize).all(|r0| {
            let o0 = reg_offset(map, r0);
            o0 % v == 0 && (0..v).all(|i| reg_offset(map, r0 + i) == o0 + i)
        });
        if runs && thread.iter().all(|t| t % v == 0) {
            break;
        }
        v /= 2;
    }
    v
}
