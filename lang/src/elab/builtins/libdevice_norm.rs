//! `libdevice.norm3d`, `norm4d`, `rnorm3d`, `rnorm4d`: √(x² + y² + z² [+ w²]) and its reciprocal, fp32 or fp64
//! (all operands of one type, broadcast together), as one `norm`/`rnorm` IR op that runs libdevice's own
//! sequence (`tessel_math::roots::norm`) in the interpreter and codegen alike.

use tessel_tile::ScalarType;
use tessel_tile::ops::Op;

use crate::elab::args::Bound;
use crate::elab::value::Tv;
use crate::elab::{Elab, R};

impl<'a> Elab<'a> {
    /// `libdevice.{r}norm{3,4}d(arg0, ...)`: `n` operands bound to `arg0`...; `recip` for the reciprocal.
    pub(super) fn libdevice_norm(&mut self, b: Bound<'a>, n: usize, recip: bool) -> R<Tv> {
        let (fname, span) = (&b.fname, b.span);
        let params = ["arg0", "arg1", "arg2", "arg3"];
        let mut xs = Vec::with_capacity(n);
        for p in &params[..n] {
            let x = self.tensor_arg(b.req(p), fname, p)?;
            self.check_dtype(&x, &[ScalarType::F32, ScalarType::F64], fname, b.req(p).span)?;
            xs.push(x);
        }
        // One type and one shape for all: each broadcast against the first, then all to the common shape.
        let mut first = xs[0].clone();
        for x in xs.iter_mut().skip(1) {
            let (f, y) = self.same_type_pair(first, x.clone(), fname, span)?;
            first = f;
            *x = y;
        }
        let shape = first.shape().to_vec();
        for x in xs.iter_mut() {
            *x = self.broadcast_to(x.clone(), &shape, span)?;
        }
        let ty = first.ty.clone();
        self.emit1(Op::Norm { recip }, &xs, ty, span)
    }
}
