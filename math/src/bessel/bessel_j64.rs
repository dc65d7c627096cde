//! libdevice's f64 Bessel functions of the first and second kinds, `j0`, `j1`, `y0`, `y1` (`__nv_j0`...), as
//! Triton 3.6 runs them (their PTX for sm_90), op for op; branches become selects. Each has ranges up to about
//! its third zero, each a polynomial in a − z times (a − z) for the zero z inside it (z in two parts, so the
//! zeros are exact; j1's first range a·P(a)), and beyond them Hankel's asymptotic form
//! √(2/(π|x|))·P(1/x²)·cos(|x| + Q(1/x²)/|x| − φ) (φ = π/4, 3π/4, 3π/4, 5π/4): 1/|x| from `rcp.approx.ftz.f64`
//! refined, the modified argument reduced by `trig::reduce64::reduce` (Payne–Hanek from 2^31 on), φ added to the
//! remainder with its quadrant, reduced again (Cody–Waite) and `__cudart_sin_cos_coeffs`' kernel. y0 and y1
//! start with the logarithmic singularity: y0 = (2/π)·ln a·j0(a) + (a² − c)·P(a²) and
//! y1 = (2/π)·(j1(a)·ln a − 1/a) + a·P(a²) (`__nv_log` and j's first range inlined). The amplitude's
//! `rsqrt.approx.f64` is the hardware's, unrefined (the CPU model rounds it correctly, so past the ranges the
//! model can differ from the GPU in the last bits).

use crate::FloatOps;
use crate::exp_log::log64::log_full;
use crate::steps64::{horner, recip};
use crate::trig::reduce64::{reduce, reduce_small};
use crate::trig::sinpi64::kernel;

/// j0: the asymptotic form's amplitude and phase polynomials in 1/x², then each range's polynomial in a − z
/// (highest degree first, as every table here).
const J0_AMP: [u64; 8] = [
    0xc0d1_15cb_8c11_a9dc,
    0x4099_2746_7a65_5012,
    0xc057_5178_7e24_7bd4,
    0x4017_04c4_e5fc_36b2,
    0xbfe1_5b74_7a2f_d531,
    0x3fba_7fea_cf6c_b79b,
    0xbfaf_ffff_eddc_f548,
    0x3fef_ffff_ffff_c9e5,
];
const J0_PHASE: [u64; 9] = [
    0xc146_02fe_1c34_685e,
    0x410e_cd45_23b1_2b84,
    0xc0c7_a2fc_1972_f05a,
    0x407e_ba13_1f7e_5beb,
    0xc037_3b92_e6e7_cc7d,
    0x3ffa_31be_e63a_2f08,
    0xbfca_d320_104d_5d05,
    0x3fb0_aaaa_9c76_d07e,
    0xbfbf_ffff_fffd_acec,
];
const J0_R1: [u64; 17] = [
    0xbcc0_d185_64c4_8c61,
    0xbcfc_f8f9_a8c2_94bc,
    0x3d3f_ab98_3cae_498b,
    0x3d7c_d7c0_1857_9b88,
    0xbdbb_dd23_42d6_4fdd,
    0xbdf5_c2d9_416b_1e2b,
    0x3e32_951d_7317_4dd5,
    0x3e67_ff99_802c_aeb5,
    0xbea1_cce3_05c4_c9f7,
    0xbed2_32c7_7e29_e1bb,
    0x3f06_ed3b_9f0e_f757,
    0x3f31_5382_ba09_6a62,
    0xbf61_f992_590d_1ae4,
    0xbf81_bb1c_be1a_465f,
    0x3fac_fae8_6436_8d84,
    0x3fbb_a1de_ea02_94a3,
    0xbfe0_9cdb_3655_1280,
];
const J0_R2: [u64; 17] = [
    0x3cbc_b0a8_f126_b343,
    0x3cf8_3fd1_f333_eb61,
    0xbd41_00e3_3e3f_b413,
    0xbd78_4607_6d00_4627,
    0x3dbe_2f1d_4f90_720d,
    0x3df1_d03b_1e4a_119b,
    0xbe34_1d72_b1b3_bce9,
    0xbe62_da37_ce2a_9ef8,
    0x3ea3_2e6d_9974_f763,
    0x3eca_d77d_744a_1879,
    0xbf08_63f4_81a3_7337,
    0xbf26_f641_f418_f0f4,
    0x3f62_7e31_fe9a_969e,
    0x3f72_f7ff_e902_5628,
    0xbfab_2150_cb41_e8bf,
    0xbf9f_8f72_e7a8_48de,
    0x3fd5_c6e6_0a09_7823,
];
const J0_R3: [u64; 17] = [
    0xbcbd_b7ff_cf65_9e24,
    0xbcf4_b3a7_1aaa_c629,
    0x3d41_7ec1_50ec_dce7,
    0x3d74_38f5_ea1d_10b2,
    0xbdbe_dae7_ec2c_9e87,
    0xbdec_add2_c4b9_1f58,
    0x3e34_582c_8ee1_2204,
    0x3e5c_eda4_51dd_20f8,
    0xbea3_0e8c_c316_5e2f,
    0xbec3_3248_42bb_1a2e,
    0x3f07_800b_c54f_bddb,
    0x3f1d_7960_5276_949a,
    0xbf60_e0d6_0385_a629,
    0xbf64_8e63_600d_82f3,
    0x3fa6_8b98_4ec6_493a,
    0x3f90_0f7f_cf18_3e0b,
    0xbfd1_5f79_77a7_72d4,
];
/// j1: as j0's, its first range a polynomial in a.
const J1_AMP: [u64; 8] = [
    0x40cd_02ea_3f2f_6751,
    0xc099_c063_22a3_f8be,
    0x405b_8935_4da7_7324,
    0xc01e_3522_9465_3188,
    0x3fe9_bc7d_b16b_d7a7,
    0xbfc8_bfe1_c3a4_f741,
    0x3fc7_ffff_f0d0_0be2,
    0x3ff0_0000_0000_68cc,
];
const J1_PHASE: [u64; 10] = [
    0xc18d_a26b_212f_dc9a,
    0x415a_30ac_6857_bee0,
    0xc117_6422_2ad7_c910,
    0x40ce_b02e_0c30_6857,
    0xc083_5185_9fa2_b23b,
    0x403e_65a0_7af5_1f42,
    0xc002_f2b8_17f7_7a57,
    0x3fd7_bcc3_4da0_69fd,
    0xbfc4_ffff_f8a4_4463,
    0x3fd7_ffff_ffff_5cd7,
];
const J1_R1: [u64; 16] = [
    0x3d02_0e4a_dcde_2ad3,
    0xbd4d_d167_a0dc_3f55,
    0x3d55_03f5_a491_e487,
    0x3dc1_f299_40c2_403a,
    0x3d84_cf93_02ea_cdef,
    0xbe38_4a53_dbbc_a436,
    0x3d97_79be_e4f6_3bcc,
    0x3ea6_c160_e414_f3f0,
    0x3d8f_3d2f_1243_0699,
    0xbf0c_71c7_2c0c_ed04,
    0x3d65_9bca_506f_1128,
    0x3f65_5555_5550_6982,
    0x3d15_ba0b_425f_1bfb,
    0xbfb0_0000_0000_0065,
    0x3c87_29a7_253f_b679,
    0x3fe0_0000_0000_0000,
];
const J1_R2: [u64; 16] = [
    0xbcf8_d3cd_bb60_175e,
    0x3d41_011a_1df0_2dad,
    0x3d76_013a_c1e5_e222,
    0xbdbe_c315_d96d_5f03,
    0xbdf0_3be1_b4b5_7207,
    0x3e34_5695_f8b6_60f7,
    0x3e61_7069_fcfc_fff4,
    0xbea3_3825_c367_45eb,
    0xbec9_799d_4f90_931b,
    0x3f08_3a06_e2f7_df13,
    0x3f26_e4c2_d53a_7cf6,
    0xbf62_4b34_0995_7b1c,
    0xbf75_3754_4c33_25df,
    0x3fab_589d_1da1_38e2,
    0x3faa_e8a3_9f51_ad13,
    0xbfd9_c6cf_582c_bf7f,
];
const J1_R3: [u64; 16] = [
    0x3cf3_eb86_7515_fad6,
    0xbd40_e836_3db6_49a9,
    0xbd73_b7dd_4a66_08fb,
    0x3dbe_c5e0_1482_c750,
    0x3dec_62bb_9e88_2103,
    0xbe34_462e_ed73_2a23,
    0xbe5d_48dc_ad7d_c59b,
    0x3ea3_026d_f291_67e9,
    0x3ec4_255b_0119_666c,
    0xbf07_96a7_51b3_2693,
    0xbf20_7358_bbdb_a284,
    0x3f61_3fbc_7d69_27b1,
    0x3f69_a4b2_92e3_dd75,
    0xbfa8_0c83_bdee_e4fb,
    0xbf95_e70d_c603_62bf,
    0x3fd3_3518_b387_4e8a,
];
/// y0: as j0's, and the small range's P(a²).
const Y0_AMP: [u64; 8] = [
    0xc0c5_e91e_6ac3_ad03,
    0x4093_f56a_049c_dde7,
    0xc055_72d3_9dfb_8433,
    0x4016_a604_1caa_59e5,
    0xbfe1_55e3_a049_3880,
    0x3fba_7fb9_2f41_7f7f,
    0xbfaf_ffff_b12e_32f5,
    0x3fef_ffff_fffe_ced5,
];
const Y0_PHASE: [u64; 10] = [
    0x418a_86a6_4be1_01dc,
    0xc157_09c7_9aac_5813,
    0x4114_2a31_c980_a287,
    0xc0c9_cbe6_8930_485d,
    0x407f_583e_14e8_a4e8,
    0xc037_4a62_9c65_0680,
    0x3ffa_32a7_af17_fae9,
    0xbfca_d324_9778_5cd6,
    0x3fb0_aaaa_9fb7_5f7b,
    0xbfbf_ffff_fffe_320f,
];
const Y0_SMALL: [u64; 9] = [
    0x3c8e_fbd0_a1b7_7c65,
    0xbd13_098c_51c1_8514,
    0x3d92_3102_d2f5_f2f5,
    0xbe0a_5f2d_ee7d_526e,
    0x3e7b_b77e_758b_38af,
    0xbee3_d1a2_06ec_4f36,
    0x3f41_83dc_d3ed_6294,
    0xbf90_3921_cf04_f123,
    0x3fc5_db69_d775_3176,
];
const Y0_R1: [u64; 24] = [
    0xbf01_6301_32d7_5fc3,
    0x3f3d_054b_05d3_c52d,
    0xbf66_dac0_b314_b2e5,
    0x3f86_a5d1_de76_263f,
    0xbf9f_d166_5282_4592,
    0x3fb0_f69a_9cc7_9fbd,
    0xbfbc_ce40_ef15_583e,
    0x3fc4_46b1_1780_e4fc,
    0xbfc8_9ae7_e196_21f7,
    0x3fca_cba1_b38e_f7b8,
    0xbfcb_4166_a03b_bfa5,
    0x3fca_cca4_d5d4_889a,
    0xbfca_1455_932b_9392,
    0x3fc9_6d8d_b8d8_44ec,
    0xbfc8_f7fb_7752_2edf,
    0x3fc8_c092_6abc_9ab0,
    0xbfc8_d35b_8fea_468c,
    0x3fc9_424b_8a0c_8f94,
    0xbfca_396a_7f34_03ef,
    0x3fcc_0680_86c3_7055,
    0xbfcc_f18e_6a4c_5c4e,
    0x3fcc_3b13_38af_4239,
    0xbfdf_7e38_a46d_70db,
    0x3fec_2437_1844_b88a,
];
const Y0_R2: [u64; 24] = [
    0xbcda_ea62_ac8b_da68,
    0xbcd2_4349_5815_1ac7,
    0x3d11_c24a_40d3_3fe1,
    0x3d23_7cd6_2fa0_8ca4,
    0xbd43_902e_0298_c52a,
    0xbd1d_daad_11ca_b40f,
    0xbd52_09d9_f06d_7de4,
    0x3d8b_b9f4_6446_8e1a,
    0xbda8_f67b_07d1_b440,
    0x3dc7_c8d6_0f9e_aecf,
    0xbde9_7034_05b4_9a8d,
    0x3e0a_6b64_e764_17e4,
    0xbe2f_6b5a_fb2f_1359,
    0x3e54_526b_71c2_1ec1,
    0xbe57_76db_cbbc_8e1d,
    0xbe93_b211_fc2d_f90e,
    0xbed4_8637_2e85_62dc,
    0x3f0a_b2c1_fbc3_a254,
    0x3f29_9827_6533_53b8,
    0xbf61_e32b_c4ed_7084,
    0xbf7c_116f_dc59_9a09,
    0x3fad_f6d5_9bf5_0c77,
    0x3faa_09c9_2903_680b,
    0xbfd9_c342_56a1_2a0b,
];
const Y0_R3: [u64; 16] = [
    0x3cf1_cb3a_ba71_8b8e,
    0xbd3f_443b_b4f5_3d75,
    0xbd77_0f73_7bd6_a786,
    0x3dbf_0e9a_2045_9e14,
    0x3def_a6b1_37d5_e108,
    0xbe34_4296_729f_b7fa,
    0xbe60_a281_3a80_dfaa,
    0x3ea3_4aa7_37a8_3eb4,
    0x3ec6_a922_7332_d03c,
    0xbf08_177e_4f93_c81e,
    0xbf22_6dd7_1e39_1775,
    0x3f61_d35e_85fd_7b22,
    0x3f6b_2f14_a955_285c,
    0xbfa8_969c_64cb_f388,
    0xbf95_aef6_11fc_4d5a,
    0x3fd3_34cc_a069_7a5a,
];
/// y1: as y0's.
const Y1_AMP: [u64; 8] = [
    0x40d1_3db3_26ec_ebfe,
    0xc09c_26e8_9385_d5b1,
    0x405c_6ab9_23c6_f55e,
    0xc01e_61ea_f3bd_2fa1,
    0x3fe9_bf15_d9b9_7dd1,
    0xbfc8_bfec_f93d_7d19,
    0x3fc7_ffff_f756_aa6c,
    0x3ff0_0000_0000_3646,
];
const Y1_PHASE: [u64; 10] = [
    0xc194_3281_a050_209c,
    0x4160_24e9_9ba4_6e7b,
    0xc11a_6875_d7df_bd65,
    0x40d0_32c0_4179_0233,
    0xc083_9f89_5bc2_2946,
    0x403e_77cc_78ec_d2d8,
    0xc002_f368_d011_7be9,
    0x3fd7_bcc7_8600_9a25,
    0xbfc4_ffff_fc51_bc7a,
    0x3fd7_ffff_ffff_b5ea,
];
const Y1_SMALL: [u64; 8] = [
    0x3d52_49f9_0687_428c,
    0xbdcf_0b5b_1fb7_b95e,
    0x3e43_2e58_9311_fa14,
    0xbeb0_a780_aa4a_92e9,
    0x3f12_c7db_ffca_ec2b,
    0xbf68_35b9_7894_ba4a,
    0x3fab_d397_5c75_b4a3,
    0xbfc9_1866_143c_bc8a,
];
const Y1_R1: [u64; 24] = [
    0xbe2b_87b0_be2a_a150,
    0x3e48_33aa_e4d8_b975,
    0xbe44_e279_b423_e68f,
    0x3e12_9dc6_a747_eb4f,
    0xbe61_d155_3449_6cd8,
    0x3e7e_ec8d_48fe_ce00,
    0xbe8d_1180_af70_a134,
    0x3e9c_8386_a0ea_1388,
    0xbeb0_1a01_4e7f_3250,
    0x3ec1_fb75_2010_a320,
    0xbed3_aa0a_ff4e_332b,
    0x3ee5_84a6_c77f_6700,
    0xbef7_94c5_20fc_2ebb,
    0x3f09_d18d_2d35_cc71,
    0xbf1c_3fb7_315c_4599,
    0x3f2e_ea7a_decc_e927,
    0xbf40_b2d8_5257_446f,
    0x3f51_7ab4_b1fe_5d5b,
    0xbf65_429d_c651_6c0d,
    0x3f7e_671c_7d0b_090b,
    0xbf73_a6de_c36f_b27c,
    0xbfa0_d2af_4e93_1fd1,
    0xbfbe_56f8_2217_b964,
    0x3fe0_aa48_442f_014b,
];
const Y1_R2: [u64; 21] = [
    0x3cba_3c76_069f_1d8c,
    0x3cc6_9a30_9967_93e2,
    0xbcdd_d843_2fe7_56e7,
    0xbd14_3158_eee2_20f7,
    0x3d28_d444_9123_0f5a,
    0xbd43_8842_eaf4_edbc,
    0x3d74_958d_afbf_af5a,
    0xbd94_49a6_0e66_4848,
    0x3d83_8bc8_cd59_4a76,
    0xbdfa_7980_0214_1323,
    0x3e38_0b41_9895_6aaa,
    0x3e5b_62b5_f21b_acd4,
    0xbea2_55e7_29fb_6aae,
    0xbec8_0618_f6ba_e5aa,
    0x3f08_5b94_0f8e_8d36,
    0x3f23_37c7_e10e_14e8,
    0xbf61_be6d_b993_32ca,
    0xbf71_0a32_9e2b_e9b8,
    0x3faa_15d9_2dfe_3fcf,
    0x3fa0_0b9f_8571_c9be,
    0xbfd5_c7c5_56f0_c19a,
];
const Y1_R3: [u64; 16] = [
    0x3cb0_9ccc_2294_5996,
    0xbd43_515f_6764_4276,
    0xbd72_c5b9_78e9_f5c7,
    0x3dbe_c115_1613_913c,
    0x3de9_e38d_13c4_a824,
    0xbe34_1e75_e108_8eb5,
    0xbe5a_384e_bb13_cfe1,
    0x3ea2_becb_27f8_c8f8,
    0x3ec1_76e7_2b98_9fd8,
    0xbf06_f7ba_b102_f822,
    0xbf1b_50d7_e1d2_78e1,
    0x3f60_7a67_8d60_004f,
    0x3f63_ced2_a2e6_9115,
    0xbfa6_395d_fe49_fcd4,
    0xbf90_2b39_33cf_21b1,
    0x3fd1_5f99_3fce_ab5c,
];

/// The asymptotic form's amplitude and phase polynomials in 1/x² (highest degree first), and −φ.
struct Far {
    amp: &'static [u64],
    phase: &'static [u64],
    shift: u64,
}

const J0_FAR: Far = Far { amp: &J0_AMP, phase: &J0_PHASE, shift: 0xbfe9_21fb_5444_2d18 };
const J1_FAR: Far = Far { amp: &J1_AMP, phase: &J1_PHASE, shift: 0xc002_d97c_7f33_21d2 };
const Y0_FAR: Far = Far { amp: &Y0_AMP, phase: &Y0_PHASE, shift: 0xc002_d97c_7f33_21d2 };
const Y1_FAR: Far = Far { amp: &Y1_AMP, phase: &Y1_PHASE, shift: 0xc00f_6a7a_2955_385e };

/// A range: (its upper end, its zero z in two parts, P), valued (a − z)·P(a − z).
type Range = (u64, (u64, u64), &'static [u64]);

const J0_RANGES: [Range; 3] = [
    (0x400f_b319_f277_bbe5, (0xc003_3d15_2e97_1b40, 0x3ca0_f539_d7da_258e), &J0_R1),
    (0x401c_58fd_1a62_f5ec, (0xc016_148f_5b2c_2e45, 0xbc97_5054_cd60_a517), &J0_R2),
    (0x4024_71fc_b6a7_a8c0, (0xc021_4eb5_6ccc_deca, 0x3cb5_1970_714c_7c25), &J0_R3),
];
/// j1's first range (up to 2.41) is a·P(a), not a range around a zero.
const J1_FIRST: u64 = 0x4003_53aa_bad7_b784;
const J1_RANGES: [Range; 2] = [
    (0x4015_b1d0_5746_14ea, (0xc00e_a755_75af_6f09, 0x3ca6_0155_a9d1_b256), &J1_R2),
    (0x4021_3065_e54c_1aa9, (0xc01c_0ff5_f3b4_7250, 0x3c9b_226d_9d24_3827), &J1_R3),
];
/// y0's small range (up to 0.797) and y1's (up to 1.30) are the logarithmic forms.
const Y0_SMALL_END: u64 = 0x3fe9_7f4a_8f9d_3f28;
const Y0_RANGES: [Range; 3] = [
    (0x4000_347c_4ab3_7b18, (0xbfec_982e_b8d4_17ea, 0xbc7e_a9d2_7034_7f83), &Y0_R1),
    (0x4016_1663_b5d9_a628, (0xc00f_a953_4d98_569c, 0x3c9f_06ae_7804_384e), &Y0_R2),
    (0x4021_4ef3_0c0c_06ed, (0xc01c_581d_c4e7_2103, 0x3c99_774a_495f_56cf), &Y0_R3),
];
const Y1_SMALL_END: u64 = 0x3ff4_c6f2_0813_2576;
const Y1_RANGES: [Range; 3] = [
    (0x4009_b510_ec2a_dc83, (0xc001_93be_d4df_f243, 0x3c8b_d1e5_0d21_9bfd), &Y1_R1),
    (0x401c_0d26_d5a5_41cb, (0xc015_b7fe_4e87_b02e, 0xbcbd_fe7b_ac22_8e8c), &Y1_R2),
    (0x4022_585c_739a_cddd, (0xc021_3127_ae61_69b4, 0xbcb4_79cc_068d_9046), &Y1_R3),
];
/// 2/π, √(2/π).
const TWO_OVER_PI: u64 = 0x3fe4_5f30_6dc9_c883;
const SQRT_2_OVER_PI: u64 = 0x3fe9_8845_33d4_3651;

/// (a − z)·P(a − z), a − z as (a + hi) + lo.
fn range<T: FloatOps>(o: &mut T, a: T::F, (_, (hi, lo), p): &Range) -> T::F {
    let hi = o.fbits(*hi);
    let d = o.add(a, hi);
    let lo = o.fbits(*lo);
    let d = o.add(d, lo);
    let v = horner(o, d, p);
    o.mul(d, v)
}

/// `far` for a past the last range (and NaN), each range's value up to its end, taken from the last range
/// down.
fn ranges<T: FloatOps>(o: &mut T, a: T::F, far: T::F, rs: &[Range]) -> T::F {
    let mut v = far;
    for r in rs.iter().rev() {
        let inside = range(o, a, r);
        let end = o.fbits(r.0);
        let le = o.le(a, end);
        v = o.sel(le, inside, v);
    }
    v
}

/// The asymptotic form for a = |x| (0 for inf).
fn asymptotic<T: FloatOps>(o: &mut T, a: T::F, f: &Far) -> T::F {
    let r = recip(o, a);
    let r2 = o.mul(r, r);
    let amp = horner(o, r2, f.amp);
    let ph = horner(o, r2, f.phase);
    let xm = o.fma(ph, r, a);
    let rs = o.rsqrt_approx(a);
    let c = o.fbits(SQRT_2_OVER_PI);
    let s = o.mul(rs, c);
    let (q, red) = reduce(o, xm);
    let amp = o.mul(s, amp);
    // cos(red + (q mod 4)·π/2 − φ): |red − φ + (q mod 4)·π/2| < 2π, so libdevice's `cos` takes its Cody–Waite
    // path (and t is never inf: NaN gives NaN on both of its paths).
    let three = o.ic(3);
    let qm = o.iand(q, three);
    let qf = o.i2f(qm);
    let shift = o.fbits(f.shift);
    let t = o.add(red, shift);
    let pio2 = o.fbits(0x3ff9_21fb_5444_2d18);
    let t = o.fma(qf, pio2, t);
    let (q2, t) = reduce_small(o, t);
    let one = o.ic(1);
    let q2 = o.iadd(q2, one);
    let cs = kernel(o, q2, t);
    let v = o.mul(amp, cs);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let is_inf = o.eq(a, inf);
    let zero = o.fc(0.0);
    o.sel(is_inf, zero, v)
}

/// `__nv_j0`.
pub fn j0<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let far = asymptotic(o, a, &J0_FAR);
    ranges(o, a, far, &J0_RANGES)
}

/// j1 for a = |x| (without the sign and the tiny range): a·P(a) up to 2.41, two ranges, the asymptotic form.
fn j1_abs<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let far = asymptotic(o, a, &J1_FAR);
    let v = ranges(o, a, far, &J1_RANGES);
    let first = j1_first(o, a);
    let end = o.fbits(J1_FIRST);
    let le = o.le(a, end);
    o.sel(le, first, v)
}

fn j1_first<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let p = horner(o, a, &J1_R1);
    o.mul(a, p)
}

/// Below |x| = 1e−30, j1 is x/2.
const J1_TINY: u64 = 0x39b4_484b_feeb_c2a0;

/// `__nv_j1`: negated for x < 0; x/2 below |x| = 1e−30.
pub fn j1<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let v = j1_abs(o, a);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nv = o.neg(v);
    let v = o.sel(neg, nv, v);
    let tiny = o.fbits(J1_TINY);
    let is_tiny = o.lt(a, tiny);
    let half = o.fc(0.5);
    let h = o.mul(x, half);
    o.sel(is_tiny, h, v)
}

/// `__nv_y0`: up to 0.797, (2/π)·ln a·j0(a) + (a² − c)·P(a²) (a² − c by an fma and a second add; j0's first
/// range, the one that holds there); three ranges; the asymptotic form; NaN (negative) for x < 0.
pub fn y0<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let far = asymptotic(o, a, &Y0_FAR);
    let v = ranges(o, a, far, &Y0_RANGES);
    let x2 = o.mul(a, a);
    let p = horner(o, x2, &Y0_SMALL);
    let c1 = o.fbits(0xbfdb_a967_4000_0000);
    let s = o.fma(a, a, c1);
    let c2 = o.fbits(0x3e15_a30c_8000_0000);
    let s = o.add(s, c2);
    let l = log_full(o, a);
    let sp = o.mul(s, p);
    let tp = o.fbits(TWO_OVER_PI);
    let l = o.mul(l, tp);
    let j = range(o, a, &J0_RANGES[0]);
    let small = o.fma(l, j, sp);
    let end = o.fbits(Y0_SMALL_END);
    let le = o.le(a, end);
    let v = o.sel(le, small, v);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nan = o.fbits(0xfff8_0000_0000_0000);
    o.sel(neg, nan, v)
}

/// Below |x| = 1.0e−308 (0x000730d67819e8d2), y1 is −(2/π)/|x| (which overflows to −inf).
const Y1_TINY: u64 = 0x0007_30d6_7819_e8d2;

/// `__nv_y1`: −(2/π)/a for tiny a; up to 1.30, (2/π)·(j1(a)·ln a − 1/a) + a·P(a²) (`rcp.rn`, j1's first range
/// or a/2 below 1e−30); three ranges; the asymptotic form. x = ±0 gives −inf, x < 0 NaN (negative).
pub fn y1<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let far = asymptotic(o, a, &Y1_FAR);
    let v = ranges(o, a, far, &Y1_RANGES);
    let x2 = o.mul(a, a);
    let p = horner(o, x2, &Y1_SMALL);
    let j = j1_first(o, a);
    let tiny = o.fbits(J1_TINY);
    let is_tiny = o.lt(a, tiny);
    let half = o.fc(0.5);
    let h = o.mul(a, half);
    let j = o.sel(is_tiny, h, j);
    let ap = o.mul(a, p);
    let l = log_full(o, a);
    let one = o.fc(1.0);
    let r = o.div(one, a);
    let nr = o.neg(r);
    let t = o.fma(j, l, nr);
    let tp = o.fbits(TWO_OVER_PI);
    let small = o.fma(t, tp, ap);
    let end = o.fbits(Y1_SMALL_END);
    let le = o.le(a, end);
    let v = o.sel(le, small, v);
    let c = o.fbits(0xbfe4_5f30_6dc9_c883);
    let pole = o.div(c, a);
    let lim = o.fbits(Y1_TINY);
    let is_tiny = o.lt(a, lim);
    let v = o.sel(is_tiny, pole, v);
    let zero = o.fc(0.0);
    let pos = o.lt(zero, x);
    let nan = o.is_nan(x);
    let keep = o.or(pos, nan);
    let is_zero = o.eq(x, zero);
    let (ninf, qnan) = (o.fbits(0xfff0_0000_0000_0000), o.fbits(0xfff8_0000_0000_0000));
    let bad = o.sel(is_zero, ninf, qnan);
    o.sel(keep, v, bad)
}

#[cfg(test)]
mod tests;
