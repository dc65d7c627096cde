//! Dead-code elimination over the emitted instruction text.
//!
//! Lowering emits per-register work eagerly: the address of every element of a vectorized access (only the
//! first of each vector is used), the product that a multiply-add contraction folded into an `fma`, constants
//! that a later fold made redundant. ptxas deletes all of that, but `--emit ptx` should not show it and
//! ptxas should not have to parse it. This pass removes pure arithmetic instructions whose results no
//! instruction reads, to a fixpoint.
//!
//! Registers are not in SSA form (loop-carried values are reassigned with `mov`), so liveness is global and
//! conservative: a register is live when any remaining instruction mentions it outside the destination of a
//! removable instruction; then every write to it is kept. Only the opcodes in [`PURE`] are ever removed, and
//! only when every destination is dead; any other line (memory, control flow, barriers, shuffles, calls,
//! labels, comments) is kept and counts every register it mentions as read.

use std::collections::HashMap;

/// Opcodes (the part before the first `.`) without side effects: removing one whose destinations are never
/// read cannot change the program. Carry-chain forms (`.cc`) are excluded separately; `ld` only in `.param`
/// space.
const PURE: &[&str] = &[
    "mov", "add", "sub", "mul", "mad", "fma", "shl", "shr", "and", "or", "xor", "not", "cnot", "cvt", "cvta", "setp",
    "selp", "bfe", "bfi", "min", "max", "neg", "abs", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh",
    "div", "rem", "popc", "clz", "brev", "prmt", "lop3", "copysign", "testp",
];

/// One line's role: `Some(dests)` for a removable instruction (with the registers it writes), `None` for
/// anything that must stay.
fn removable_dests(line: &str) -> Option<Vec<&str>> {
    let t = line.trim();
    let t = t.strip_suffix(';')?;
    // A guarded instruction writes its destination only sometimes: the old value flows through, so the
    // destination is read as well; still removable when nothing reads it afterwards.
    let t = match t.strip_prefix('@') {
        Some(rest) => rest.split_once(' ')?.1.trim_start(),
        None => t,
    };
    let (opcode, operands) = t.split_once(char::is_whitespace)?;
    let base = opcode.split('.').next()?;
    let pure = PURE.contains(&base) || opcode.starts_with("ld.param");
    if !pure || opcode.contains(".cc") {
        return None;
    }
    let dest = first_operand(operands.trim_start());
    let regs: Vec<&str> = registers(dest).collect();
    (!regs.is_empty()).then_some(regs)
}

/// The first top-level operand (a register, `%p1|%p2`, or a `{...}` vector).
fn first_operand(ops: &str) -> &str {
    let mut depth = 0;
    for (i, c) in ops.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => return &ops[..i],
            _ => {}
        }
    }
    ops
}

/// The virtual registers mentioned in `text` (`%r12`, `%rd3`, `%p1`, `%h4`, `%f5`, `%fd6`; special
/// registers such as `%tid.x` have no number and are skipped).
fn registers(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('%').filter_map(move |(i, _)| {
        let rest = &text[i + 1..];
        let alpha = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let digits = rest[alpha..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - alpha);
        let prefix = &rest[..alpha];
        (digits > 0 && matches!(prefix, "p" | "h" | "r" | "rd" | "f" | "fd")).then(|| &text[i..i + 1 + alpha + digits])
    })
}

/// Removes dead pure instructions from `code` (one instruction, label or comment per line).
pub fn eliminate(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let dests: Vec<Option<Vec<&str>>> = lines.iter().map(|l| removable_dests(l)).collect();
    // Reads of each register: every mention, except a removable instruction's destinations (each mention
    // counted once per line occurrence).
    let reads_of = |i: usize| -> Vec<&str> {
        let all = registers(lines[i]);
        match &dests[i] {
            None => all.collect(),
            Some(d) => {
                let mut skip = d.clone();
                all.filter(|r| match skip.iter().position(|s| s == r) {
                    Some(k) => {
                        skip.swap_remove(k);
                        false
                    }
                    None => true,
                })
                .collect()
            }
        }
    };
    let mut reads: HashMap<&str, u32> = HashMap::new();
    for i in 0..lines.len() {
        for r in reads_of(i) {
            *reads.entry(r).or_insert(0) += 1;
        }
    }
    let mut alive = vec![true; lines.len()];
    loop {
        let mut changed = false;
        for i in 0..lines.len() {
            let Some(d) = &dests[i] else { continue };
            if alive[i] && d.iter().all(|r| reads.get(r).copied().unwrap_or(0) == 0) {
                alive[i] = false;
                changed = true;
                for r in reads_of(i) {
                    *reads.get_mut(r).expect("counted above") -= 1;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = String::with_capacity(code.len());
    for (line, keep) in lines.iter().zip(alive) {
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::eliminate;

    #[test]
    fn dead_chains_go_and_everything_else_stays() {
        let code = "    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 3;
    mul.wide.s32 %rd2, %r2, 2;
    add.s64 %rd3, %rd1, %rd2;
    mul.rn.f32 %f3, %f1, %f2;
    fma.rn.f32 %f4, %f1, %f2, %f0;
    setp.lt.s32 %p1, %r2, %r9;
    @%p1 st.global.b32 [%rd1], %f4;
    ld.shared.v4.b32 {%r5, %r6, %r7, %r8}, [%r3];
    mov.b32 {%h1, %h2}, %r10;
    mov.b32 {%h3, %h4}, %r11;
    st.global.b16 [%rd1], %h4;
$L_loop:
    add.s32 %r20, %r20, 1;
    @%p1 bra $L_loop;
";
        let out = eliminate(code);
        // Dead: the unused address (mul.wide + add.s64), the product folded into the fma, and the unpack
        // whose halves nobody reads. Live: everything feeding the store, the load (not pure), the unpack with
        // one half read, the self-updating counter (it reads itself), control flow.
        for gone in ["mul.wide.s32", "add.s64", "mul.rn.f32", "{%h1, %h2}"] {
            assert!(!out.contains(gone), "{gone} should be gone:\n{out}");
        }
        for kept in
            ["%tid.x", "shl.b32", "fma.rn.f32", "setp.lt", "st.global.b32", "ld.shared", "{%h3, %h4}", "add.s32"]
        {
            assert!(out.contains(kept), "{kept} should stay:\n{out}");
        }
        assert!(out.contains("$L_loop:") && out.contains("bra $L_loop"), "{out}");
    }

    #[test]
    fn a_register_written_twice_and_read_once_keeps_both_writes() {
        // Not SSA: the read after the branch may see either write.
        let code = "    mov.b32 %r1, 0;
    @%p1 bra $L_a;
    mov.b32 %r1, 7;
$L_a:
    st.global.b32 [%rd1], %r1;
";
        assert_eq!(eliminate(code), code);
    }

    #[test]
    fn two_predicate_destinations_are_dead_only_together() {
        let code = "    setp.lt.s32 %p1|%p2, %r1, %r2;
    @%p2 bra $L_x;
$L_x:
    setp.lt.s32 %p3|%p4, %r1, %r2;
";
        let out = eliminate(code);
        assert!(out.contains("%p1|%p2") && !out.contains("%p3|%p4"), "{out}");
    }
}
