//! `tessel._tessel` layout functions behind `tessel.layouts`: F2 linear layouts built from their Gluon spelling
//! ([`tessel::layouts::expr::parse_layout_expr`]), evaluated, composed and inverted; conversions between them
//! planned ([`tessel::layouts::plan_conversion`]), run on tagged data by the plan executor
//! ([`tessel::layouts::testing::check_conversion`]), and their shared-memory bank conflicts counted. Every error
//! is a `tessel.layouts.LayoutError` (a `ValueError`) carrying the crate's message.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use tessel::layouts::convert::{BankReport, bank_conflicts as count_bank_conflicts};
use tessel::layouts::expr::{layout_kind, parse_layout_expr};
use tessel::layouts::standard::{AnyLayout, SharedLayout};
use tessel::layouts::testing::{ConversionFailure, ConversionReport, check_conversion as check, corrupt_plan};
use tessel::layouts::{ConversionPlan, LinearLayout, PlanOptions, plan_conversion as plan};

create_exception!(_tessel, LayoutError, PyValueError, "A layout, or a conversion between two, is invalid.");

fn err(e: impl std::fmt::Display) -> PyErr {
    LayoutError::new_err(e.to_string())
}

/// An F2 linear layout: named in-dims (`register`, `lane`, `warp`, `block`; `offset` for shared memory) to named
/// out-dims (`dim0`, `dim1`, ...).
#[pyclass(name = "LinearLayout", module = "tessel._tessel", frozen)]
pub struct PyLinearLayout {
    layout: LinearLayout,
}

fn wrap(layout: LinearLayout) -> PyLinearLayout {
    PyLinearLayout { layout }
}

#[pymethods]
impl PyLinearLayout {
    /// The layout a Gluon spelling (`BlockedLayout([1,4],[8,4],[4,1],[1,0])`, `NVMMASharedLayout(...)`, ...)
    /// gives a tensor of `shape`; `shape` may be left out when the spelling implies one.
    #[staticmethod]
    #[pyo3(signature = (spelling, shape=None))]
    fn parse(spelling: &str, shape: Option<Vec<u32>>) -> PyResult<Self> {
        let parsed = parse_layout_expr(spelling).map_err(err)?;
        let shape = shape
            .or(parsed.shape)
            .ok_or_else(|| LayoutError::new_err(format!("`{spelling}` does not imply a shape: pass shape=[...]")))?;
        parsed.layout.to_linear(&shape).map(wrap).map_err(err)
    }

    /// The layout with these bases: `(in-dim, [basis, ...])` pairs (one coordinate per out-dim in each basis), and
    /// the out-dims with their sizes.
    #[staticmethod]
    fn from_bases(bases: Vec<(String, Vec<Vec<u32>>)>, out_dims: Vec<(String, u32)>) -> PyResult<Self> {
        LinearLayout::new(bases, out_dims).map(wrap).map_err(err)
    }

    /// `(in-dim, [basis, ...])` for every in-dim, in order.
    fn bases(&self) -> Vec<(String, Vec<Vec<u32>>)> {
        self.layout.bases_vec().into_iter().map(|(d, b)| (d.to_string(), b)).collect()
    }

    /// `(in-dim, size)` for every in-dim, in order.
    fn in_dims(&self) -> Vec<(String, u32)> {
        self.layout.in_dim_sizes().into_iter().map(|(d, n)| (d.to_string(), n)).collect()
    }

    /// `(out-dim, size)` for every out-dim, in order.
    fn out_dims(&self) -> Vec<(String, u32)> {
        self.layout.out_dim_sizes().into_iter().map(|(d, n)| (d.to_string(), n)).collect()
    }

    /// The coordinates (one per out-dim, in order) of the named indices; in-dims left out are 0.
    fn apply(&self, indices: Vec<(String, u32)>) -> PyResult<Vec<u32>> {
        for (name, x) in &indices {
            if !self.layout.has_in_dim(name) {
                let dims: Vec<String> = self.layout.in_dims().map(|d| d.to_string()).collect();
                return Err(LayoutError::new_err(format!(
                    "no in-dim `{name}` (the in-dims are [{}])",
                    dims.join(", ")
                )));
            }
            let size = self.layout.in_dim_size(name);
            if *x >= size {
                return Err(LayoutError::new_err(format!("{name}={x} is out of range: `{name}` has size {size}")));
            }
        }
        let named: Vec<(&str, u32)> = indices.iter().map(|(n, x)| (n.as_str(), *x)).collect();
        Ok(self.layout.apply_named(&named).into_iter().map(|(_, c)| c).collect())
    }

    /// `outer ∘ self`: this layout's out-dims must be `outer`'s in-dims.
    fn compose(&self, outer: &PyLinearLayout) -> PyResult<Self> {
        self.layout.compose(&outer.layout).map(wrap).map_err(err)
    }

    /// The inverse of a bijective layout.
    fn invert(&self) -> PyResult<Self> {
        self.layout.invert().map(wrap).map_err(err)
    }

    fn is_injective(&self) -> bool {
        self.layout.is_injective()
    }

    fn is_surjective(&self) -> bool {
        self.layout.is_surjective()
    }

    fn is_invertible(&self) -> bool {
        self.layout.is_invertible()
    }

    /// Whether both layouts map every input to the same output (zero bases and dims of size 1 aside).
    fn equivalent(&self, other: &PyLinearLayout) -> bool {
        self.layout.equivalent(&other.layout)
    }

    fn __eq__(&self, other: &PyLinearLayout) -> bool {
        self.layout == other.layout
    }

    fn __str__(&self) -> String {
        self.layout.to_string()
    }
}

fn options(max_scratch_bytes: Option<u32>, allow_shuffles: bool) -> PlanOptions {
    PlanOptions { max_scratch_bytes, allow_shuffles }
}

/// A plan's summary as a dict: `kind` (`noop`, `registers`, `shuffle`, `shared`), `vector_width` (elements per
/// shared access, 0 without shared memory), `access_bytes`, `store_conflicts`, `load_conflicts`, `scratch_bytes`,
/// `reps`, `barrier` (`warp`, `cta`, or None), `shuffles`, `shared_stores`, `shared_loads`, `barriers`,
/// `elem_bits`, and `text` (the plan as the CLI prints it).
fn summary<'py>(py: Python<'py>, r: &ConversionReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", r.plan.kind())?;
    let (vec, scratch, reps, barrier) = match &r.plan {
        ConversionPlan::SharedRoundTrip(sp) => {
            (sp.vec, sp.scratch_bytes, sp.reps, Some(format!("{:?}", sp.barrier).to_lowercase()))
        }
        _ => (0, 0, 1, None),
    };
    d.set_item("vector_width", vec)?;
    d.set_item("access_bytes", r.access_bytes)?;
    d.set_item("store_conflicts", r.store_conflicts)?;
    d.set_item("load_conflicts", r.load_conflicts)?;
    d.set_item("scratch_bytes", scratch)?;
    d.set_item("reps", reps)?;
    d.set_item("barrier", barrier)?;
    d.set_item("shuffles", r.shuffles)?;
    d.set_item("shared_stores", r.shared_stores)?;
    d.set_item("shared_loads", r.shared_loads)?;
    d.set_item("barriers", r.barriers)?;
    d.set_item("elem_bits", r.elem_bits)?;
    d.set_item("text", r.plan.to_string())?;
    Ok(d)
}

/// Plans the conversion from `src` to `dst` for `bits`-bit elements and summarizes the plan (see [`summary`]).
#[pyfunction]
#[pyo3(signature = (src, dst, bits, max_scratch_bytes=None, allow_shuffles=true))]
fn plan_conversion<'py>(
    py: Python<'py>,
    src: &PyLinearLayout,
    dst: &PyLinearLayout,
    bits: u32,
    max_scratch_bytes: Option<u32>,
    allow_shuffles: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let p = plan(&src.layout, &dst.layout, bits, &options(max_scratch_bytes, allow_shuffles)).map_err(err)?;
    summary(py, &ConversionReport::of(p, bits))
}

/// Plans the conversion and runs it on `cases` tensors of random `bits`-bit values (seeds `seed`, `seed + 1`,
/// ...), checking every destination register. Returns `(ok, message, summary)`: `message` explains the first
/// wrong register (or why the plan cannot run) when `ok` is false, and `summary` is the plan's (see [`summary`]).
/// A conversion the planner refuses (different shapes, ...) raises `LayoutError`.
///
/// `corrupt=True` is a test hook: it runs the plan with one data movement redirected on purpose
/// ([`corrupt_plan`]), so that the checker has something to catch.
#[pyfunction]
#[pyo3(signature = (src, dst, bits, seed=0, cases=1, max_scratch_bytes=None, allow_shuffles=true, corrupt=false))]
#[allow(clippy::too_many_arguments)]
fn check_conversion<'py>(
    py: Python<'py>,
    src: &PyLinearLayout,
    dst: &PyLinearLayout,
    bits: u32,
    seed: u64,
    cases: u32,
    max_scratch_bytes: Option<u32>,
    allow_shuffles: bool,
    corrupt: bool,
) -> PyResult<(bool, Option<String>, Bound<'py, PyDict>)> {
    let (s, d) = (&src.layout, &dst.layout);
    let opts = options(max_scratch_bytes, allow_shuffles);
    let result = if corrupt {
        let p = plan(s, d, bits, &opts).map_err(err)?;
        let broken = corrupt_plan(&p, s, d)
            .ok_or_else(|| LayoutError::new_err("corrupt=True: these layouts leave no data movement to redirect"))?;
        let outcome = (0..cases.max(1))
            .try_for_each(|k| tessel::layouts::testing::check_plan(&broken, s, d, bits, seed.wrapping_add(k as u64)));
        outcome.map(|()| ConversionReport::of(broken.clone(), bits)).map_err(|f| (f, broken))
    } else {
        match check(s, d, bits, &opts, seed, cases) {
            Ok(report) => Ok(report),
            Err(ConversionFailure::Plan(e)) => return Err(LayoutError::new_err(e)),
            Err(failure) => {
                // The plan the checker ran, for the summary (planning succeeded, or it would have said so).
                let p = plan(s, d, bits, &opts).map_err(err)?;
                Err((failure, p))
            }
        }
    };
    match result {
        Ok(report) => Ok((true, None, summary(py, &report)?)),
        Err((failure, p)) => Ok((false, Some(failure.to_string()), summary(py, &ConversionReport::of(p, bits))?)),
    }
}

fn bank_dict<'py>(py: Python<'py>, r: &BankReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("conflicts", r.conflicts)?;
    d.set_item("wavefronts", r.wavefronts)?;
    d.set_item("ideal_wavefronts", r.ideal_wavefronts)?;
    d.set_item("vector_width", r.vec)?;
    d.set_item("bytes_per_access", r.bytes_per_access)?;
    d.set_item("instructions", r.instructions.len())?;
    d.set_item("max_conflicts_per_instruction", r.max_conflicts_per_instruction())?;
    Ok(d)
}

/// Bank conflicts of moving a tensor between registers laid out by `dist` and shared memory laid out by
/// `shared`, for one CTA: `conflicts` (wavefronts beyond the ideal), `wavefronts`, `ideal_wavefronts`,
/// `vector_width`, `bytes_per_access`, `instructions`, `max_conflicts_per_instruction`.
#[pyfunction]
fn bank_conflicts<'py>(
    py: Python<'py>,
    dist: &PyLinearLayout,
    shared: &PyLinearLayout,
    bits: u32,
) -> PyResult<Bound<'py, PyDict>> {
    bank_dict(py, &count_bank_conflicts(&dist.layout, &shared.layout, bits).map_err(err)?)
}

/// A Gluon layout expression evaluated (`NVMMASharedLayout.get_default_for([128, 64], float16)`,
/// `gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])`): `(spelling, class name, fields)`, the spelling canonical
/// (the one the compiler prints and reads back, so equal layouts spell equally) and `fields` the computed
/// parameters of an `NVMMASharedLayout` (`swizzle_byte_width`, `element_bitwidth`, `rank`, `transposed`,
/// `fp4_padded`), None for the other classes. The host-side `gl.*` layout classes are built through this.
#[pyfunction]
fn gluon_layout<'py>(py: Python<'py>, spelling: &str) -> PyResult<(String, &'static str, Option<Bound<'py, PyDict>>)> {
    let layout = parse_layout_expr(spelling).map_err(|e| LayoutError::new_err(format!("`{spelling}`: {e}")))?.layout;
    let fields = match &layout {
        AnyLayout::Shared(SharedLayout::Nvmma(l)) => {
            let d = PyDict::new(py);
            d.set_item("swizzle_byte_width", l.swizzle_byte_width)?;
            d.set_item("element_bitwidth", l.element_bitwidth)?;
            d.set_item("rank", l.rank)?;
            d.set_item("transposed", l.transposed)?;
            d.set_item("fp4_padded", l.fp4_padded)?;
            Some(d)
        }
        _ => None,
    };
    Ok((layout.to_string(), layout_kind(&layout), fields))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gluon_layout, m)?)?;
    m.add_class::<PyLinearLayout>()?;
    m.add_function(wrap_pyfunction!(plan_conversion, m)?)?;
    m.add_function(wrap_pyfunction!(check_conversion, m)?)?;
    m.add_function(wrap_pyfunction!(bank_conflicts, m)?)?;
    m.add("LayoutError", m.py().get_type::<LayoutError>())?;
    Ok(())
}
