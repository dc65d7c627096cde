//! `libdevice.jn(n, x)` and `libdevice.yn(n, x)`: the Bessel functions of an int32 order of fp32 or fp64 values
//! (the order and x broadcast together), as one `jn`/`yn` IR op that runs libdevice's recurrences
//! (`tessel_math::bessel::bessel_n`) in the interpreter and codegen alike.

use tessel_math::bessel::bessel_n::Kind;
use tessel_tile::ScalarType;
use tessel_tile::ops::Op;

use crate::elab::args::Bound;
use crate::elab::value::Tv;
use crate::elab::{Elab, R};

impl<'a> Elab<'a> {
    /// `libdevice.jn(arg0, arg1)` / `libdevice.yn(arg0, arg1)`: arg0 the order (int32), arg1 x.
    pub(super) fn libdevice_bessel_n(&mut self, b: Bound<'a>, kind: Kind) -> R<Tv> {
        let (fname, span) = (&b.fname, b.span);
        let n = self.tensor_arg(b.req("arg0"), fname, "arg0")?;
        let x = self.tensor_arg(b.req("arg1"), fname, "arg1")?;
        self.check_dtype(&n, &[ScalarType::I32], fname, b.req("arg0").span)?;
        self.check_dtype(&x, &[ScalarType::F32, ScalarType::F64], fname, b.req("arg1").span)?;
        let (n, x) = self.broadcast_pair(n, x, span)?;
        let ty = x.ty.clone();
        self.emit1(Op::BesselN(kind), &[n, x], ty, span)
    }
}
