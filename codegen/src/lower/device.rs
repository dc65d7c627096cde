//! `tl.extra.cuda`'s reads of device state and programmatic-dependent-launch control: `globaltimer` (the
//! global nanosecond timer, `%globaltimer`), `smid` (the multiprocessor running the program, `%smid`), and
//! `gdc_wait` / `gdc_launch_dependents` (`griddepcontrol.wait` / `.launch_dependents`, sm_90 and newer).

use tessel_tile::Target;
use tessel_tile::ir::OpData;
use tessel_tile::ops::Op;

use super::Lower;
use crate::CompileError;
use crate::ptx::{RegClass, special};

pub(crate) fn lower(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    match &data.op {
        Op::GlobalTimer => {
            let r = l.b.reg(RegClass::B64);
            l.b.op("mov.u64", r, special("%globaltimer"));
            l.vals.insert(data.results[0], vec![r]);
        }
        Op::SmId => {
            let r = l.b.reg(RegClass::B32);
            l.b.op("mov.u32", r, special("%smid"));
            l.vals.insert(data.results[0], vec![r]);
        }
        Op::GdcWait | Op::GdcLaunchDependents => {
            if l.arch == Target::Sm80 {
                return Err(CompileError::new(format!(
                    "`{}` (programmatic dependent launch, griddepcontrol) needs sm_90a or newer",
                    data.op.name()
                )));
            }
            let what = if data.op == Op::GdcWait { "griddepcontrol.wait" } else { "griddepcontrol.launch_dependents" };
            l.b.effect(what, ());
        }
        _ => unreachable!("not a device-state op"),
    }
    Ok(())
}
