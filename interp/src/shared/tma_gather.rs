//! `tma_gather` and `tma_scatter` (TMA gather4/scatter4, [`tessel_tile::tma_gather`]): one descriptor block
//! (`[1, cols]`) per row index. A gather reads its rows at issue (rows and columns outside the tensor read the
//! descriptor's padding) and lands them when a wait sees the barrier phase their bytes complete, as a TMA load;
//! a scatter writes global memory at issue (what falls outside the tensor is dropped) and its buffer stays read
//! until a `tma_store_wait` retires it, as a TMA store. What the GPU stops on with an illegal instruction is an
//! error here: a column offset that is not 16-byte aligned, and negative scatter coordinates.

use super::{Fault, Program};
use crate::error::DescriptorFault;
use crate::value::Tensor;
use tessel_tile::ir::{OpId, ValueId};

impl Program<'_> {
    /// The row indices and the column offset of a gather or scatter, the column checked for alignment.
    fn gather_coords(&self, o: OpId, x: ValueId, y: ValueId) -> Result<(Vec<i64>, i64), Fault> {
        let desc = self.f.op(o).operands[0];
        let (elem, _) = tessel_tile::tma::desc_block(self.f.ty(desc)).expect("verified: a tensordesc");
        let rows: Vec<i64> = self.tensor(x).data.iter().map(|v| v.as_i64()).collect();
        let column = self.tensor(y).data[0].as_i64();
        if (column * elem.bytes() as i64) % 16 != 0 {
            let op = tessel_tile::tma_gather::display_name(&self.f.op(o).op);
            return Err(DescriptorFault::GatherColumn { op, column, elem }.into());
        }
        Ok((rows, column))
    }

    /// `tma_gather desc, mem, bar, x, y [, pred]`.
    pub(super) fn tma_gather(&mut self, o: OpId) -> Result<(), Fault> {
        let ins = self.f.op(o).operands.clone();
        if let Some(&p) = ins.get(5)
            && !self.tensor(p).data[0].is_true()
        {
            return Ok(());
        }
        let (rows, column) = self.gather_coords(o, ins[3], ins[4])?;
        let mut block: Option<Tensor> = None;
        for &row in &rows {
            let r = self.desc_read(ins[0], &[row, column])?;
            match &mut block {
                None => block = Some(r),
                Some(b) => b.data.extend(r.data),
            }
        }
        let mut block = block.expect("verified: at least 8 rows");
        block.shape = self.f.ty(ins[1]).shape().into();
        self.tma_land_on_barrier(o, block)
    }

    /// `tma_scatter desc, mem, x, y`.
    pub(super) fn tma_scatter(&mut self, o: OpId) -> Result<(), Fault> {
        let ins = self.f.op(o).operands.clone();
        let (rows, column) = self.gather_coords(o, ins[2], ins[3])?;
        if let Some(&row) = rows.iter().find(|&&r| r < 0 || column < 0) {
            return Err(DescriptorFault::ScatterNegative { row, column }.into());
        }
        let value = self.read_buffer(ins[1])?;
        let cols = value.shape[1] as usize;
        for (i, &row) in rows.iter().enumerate() {
            let data = value.data[i * cols..(i + 1) * cols].to_vec();
            let r = Tensor { shape: vec![1, cols as u32], elem: value.elem, data };
            self.desc_write(ins[0], &[row, column], &r)?;
        }
        let view = self.view(ins[1])?;
        self.smem.tma_store_reads.push_back(view);
        Ok(())
    }
}
