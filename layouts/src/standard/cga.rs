//! The CGA part of a layout: how the CTAs of a cluster share a tensor, as a map `block → dim0..` in units of
//! one CTA's tile.

use crate::linear::{LinearLayout, Result, bail, standard_out_dims};

use super::CgaLayout;
use super::common::{MAX_PARAM_LOG2, check_permutation, check_pow2_list, check_rank};

impl CgaLayout {
    /// The arrangement of the CTAs: in-dim `block`, out-dims `dim0..dim{rank-1}` in that order, coordinates in
    /// units of one CTA's tile. A zero basis means two CTAs hold the same part of the tensor.
    pub fn to_linear(&self, rank: usize) -> Result<LinearLayout> {
        let names = standard_out_dims(rank);
        match self {
            CgaLayout::Single => {
                Ok(names.iter().fold(LinearLayout::empty(), |acc, n| acc * LinearLayout::identity_1d(1, "block", n)))
            }
            CgaLayout::Bases(bases) => {
                if bases.len() as u32 > MAX_PARAM_LOG2 {
                    bail!("cga_layout has {} bases; at most {MAX_PARAM_LOG2} are supported", bases.len());
                }
                for (i, b) in bases.iter().enumerate() {
                    if b.len() != rank {
                        bail!("cga_layout basis {i} {b:?} has {} coordinates but the layout has rank {rank}", b.len());
                    }
                    if let Some(&c) = b.iter().find(|&&c| c != 0 && !c.is_power_of_two()) {
                        bail!("cga_layout basis {i} {b:?} has coordinate {c}, which is neither 0 nor a power of two");
                    }
                }
                let layout = LinearLayout::from_bases([("block", bases.clone())], names)?;
                if !layout.is_surjective() {
                    bail!("cga_layout {bases:?} leaves some CTA tiles of the tensor to no CTA");
                }
                Ok(layout)
            }
            CgaLayout::Legacy { ctas_per_cga, cta_split, cta_order } => {
                check_rank(ctas_per_cga, rank, "ctas_per_cga")?;
                check_rank(cta_split, rank, "cta_split_num")?;
                check_pow2_list(ctas_per_cga, "ctas_per_cga")?;
                check_pow2_list(cta_split, "cta_split_num")?;
                check_permutation(cta_order, rank, "cta_order")?;
                if let Some(d) = (0..rank).find(|&d| cta_split[d] > ctas_per_cga[d]) {
                    bail!(
                        "cta_split_num {cta_split:?} splits dim {d} into {} parts but there are only {} CTAs along it \
                         (ctas_per_cga {ctas_per_cga:?})",
                        cta_split[d],
                        ctas_per_cga[d]
                    );
                }
                let mut layout = LinearLayout::empty();
                for &d in cta_order {
                    let d = d as usize;
                    let (split, ctas) = (cta_split[d], ctas_per_cga[d]);
                    layout = layout
                        * LinearLayout::identity_1d(split, "block", &names[d])
                        * LinearLayout::zeros_1d(ctas / split, "block", &names[d]);
                }
                let refs: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
                layout.transpose_outs(&refs)
            }
        }
    }

    /// The arrangement a dot operand inherits from its parent: the CTAs that split the parent along `k_dim` hold
    /// the whole K extent of the operand, so that dim is broadcast.
    pub fn broadcast_dim(&self, k_dim: usize) -> CgaLayout {
        match self {
            CgaLayout::Single => CgaLayout::Single,
            CgaLayout::Bases(bases) => CgaLayout::Bases(
                bases
                    .iter()
                    .map(|b| b.iter().enumerate().map(|(i, &c)| if i == k_dim { 0 } else { c }).collect())
                    .collect(),
            ),
            CgaLayout::Legacy { ctas_per_cga, cta_split, cta_order } => {
                let mut cta_split = cta_split.clone();
                if let Some(s) = cta_split.get_mut(k_dim) {
                    *s = 1;
                }
                CgaLayout::Legacy { ctas_per_cga: ctas_per_cga.clone(), cta_split, cta_order: cta_order.clone() }
            }
        }
    }

    /// The arrangement of a view whose dim `i` is this layout's dim `order[i]` (a permuted buffer or tensor):
    /// each basis permuted alike.
    pub fn permuted(&self, order: &[u32]) -> Result<CgaLayout> {
        let bases = match self {
            CgaLayout::Single => return Ok(CgaLayout::Single),
            CgaLayout::Bases(bases) => bases.clone(),
            CgaLayout::Legacy { .. } => {
                self.to_linear(order.len())?.bases("block").iter().map(|b| b.to_vec()).collect()
            }
        };
        check_permutation(order, order.len(), "order")?;
        if let Some(b) = bases.iter().find(|b| b.len() != order.len()) {
            bail!("cga_layout basis {b:?} has {} coordinates, the order {order:?} {}", b.len(), order.len());
        }
        Ok(CgaLayout::Bases(bases.iter().map(|b| order.iter().map(|&d| b[d as usize]).collect()).collect()))
    }

    /// True for a single CTA (no `block` bits at all).
    pub fn is_single(&self) -> bool {
        match self {
            CgaLayout::Single => true,
            CgaLayout::Bases(b) => b.is_empty(),
            CgaLayout::Legacy { ctas_per_cga, .. } => ctas_per_cga.iter().all(|&c| c == 1),
        }
    }

    /// How many parts each dim of the tensor is split into across the CTAs (broadcast CTAs do not count).
    pub fn split_per_dim(&self, rank: usize) -> Result<Vec<u32>> {
        let layout = self.to_linear(rank)?;
        Ok(layout.out_dim_sizes().into_iter().map(|(_, s)| s).collect())
    }
}
