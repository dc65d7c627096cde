//! 8-bit elements that also sit packed in a wider register.
//!
//! An 8-bit element lives in the low byte of a 16-bit register (extended: sign for i8, zero for u8 and fp8).
//! Where lowering produces such elements out of a packed word (two fp8 values from one `cvt ...x2`, four bytes
//! from one shuffled word), it records where each element's byte also sits ([`Lower::bytes`]). A consumer that
//! packs elements four to a 32-bit register again (wgmma's A in registers, the words a warp shuffle sends)
//! then builds the word from those packed registers with at most one `prmt` per extra source word, or takes
//! the word itself when it already holds the bytes in order; the element registers nobody else reads are left
//! to dead-code elimination. Without this every element is unpacked and repacked byte by byte.
//!
//! The packed registers are written once where the elements are made and never reassigned (loop-carried values
//! get registers of their own), so a word is defined wherever its elements are.

use super::Lower;
use crate::ptx::{Reg, RegClass, vector};

/// Where an 8-bit element's byte also sits: byte `byte` of `word` (a 16- or 32-bit register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ByteOf {
    pub word: Reg,
    pub byte: u8,
}

/// The `prmt` selector placing, in byte `i` of the result, byte `sel[i]` of the pair `{a, b}` (0-3: `a`, 4-7:
/// `b`); `None` bytes take byte 0 (don't care).
pub(crate) fn selector(sel: &[Option<u8>]) -> u32 {
    sel.iter().enumerate().fold(0, |acc, (i, s)| acc | u32::from(s.unwrap_or(0)) << (4 * i))
}

impl Lower<'_> {
    /// The element register (16 bits, sign-extended when `signed`, else zero-extended) of byte `i` of `word`,
    /// recorded as sitting there.
    pub(crate) fn extract_byte(&mut self, word: Reg, i: u8, signed: bool) -> Reg {
        let e = self.b.reg(RegClass::B16);
        match word.class {
            RegClass::B16 => match (i, signed) {
                (0, false) => self.b.op("and.b16", e, (word, 255)),
                (0, true) => self.b.op("cvt.s16.s8", e, word),
                (_, false) => self.b.op("shr.u16", e, (word, 8)),
                (_, true) => self.b.op("shr.s16", e, (word, 8)),
            },
            _ => {
                // Byte i, then the upper byte of the half: zeros (byte 4 of {word, 0}) or its sign.
                let fill = if signed { 8 | i } else { 4 };
                let t = self.b.reg(RegClass::B32);
                let sel = selector(&[Some(i), Some(fill), Some(fill), Some(fill)]);
                self.b.op("prmt.b32", t, (word, 0, sel));
                self.b.op("cvt.u16.u32", e, t);
            }
        }
        self.bytes.insert(e, ByteOf { word, byte: i });
        e
    }

    /// A 16-bit register whose byte `k` is the 8-bit element `elems[k]` (two): the pair's conversion result when
    /// the elements are its two bytes in order, else the low half of [`Lower::pack_bytes`].
    pub(crate) fn pack_bytes16(&mut self, elems: &[Reg]) -> Reg {
        let at = |e: &Reg| self.bytes.get(e).copied();
        if let [Some(a), Some(b)] = [at(&elems[0]), at(&elems[1])]
            && a.word == b.word
            && a.word.class == RegClass::B16
            && (a.byte, b.byte) == (0, 1)
        {
            return a.word;
        }
        let w = self.pack_bytes(&elems[..2]);
        let h = self.b.reg(RegClass::B16);
        self.b.op("cvt.u16.u32", h, w);
        h
    }

    /// A 32-bit register whose byte `k` is the 8-bit element `elems[k]` (at most four; the bytes above are
    /// unspecified), from the packed registers the elements are known to sit in.
    pub(crate) fn pack_bytes(&mut self, elems: &[Reg]) -> Reg {
        assert!(!elems.is_empty() && elems.len() <= 4, "pack_bytes packs one to four bytes");
        let src: Vec<ByteOf> =
            elems.iter().map(|&e| self.bytes.get(&e).copied().unwrap_or(ByteOf { word: e, byte: 0 })).collect();
        // 16-bit words pair up into 32-bit ones, in order of first use.
        let mut halves: Vec<Reg> = Vec::new();
        for s in &src {
            if s.word.class == RegClass::B16 && !halves.contains(&s.word) {
                halves.push(s.word);
            }
        }
        let mut widened: Vec<(Reg, Reg, u8)> = Vec::new();
        for pair in halves.chunks(2) {
            let w = self.b.reg(RegClass::B32);
            let hi = pair.get(1).copied().unwrap_or(pair[0]);
            self.b.op("mov.b32", w, vector(&[pair[0], hi]));
            widened.push((pair[0], w, 0));
            if pair.len() == 2 {
                widened.push((pair[1], w, 2));
            }
        }
        let at: Vec<(Reg, u8)> = src
            .iter()
            .map(|s| match widened.iter().find(|(h, _, _)| *h == s.word) {
                Some(&(_, w, off)) => (w, off + s.byte),
                None => (s.word, s.byte),
            })
            .collect();
        let mut words: Vec<Reg> = Vec::new();
        for &(w, _) in &at {
            if !words.contains(&w) {
                words.push(w);
            }
        }
        if words.len() == 1 && at.iter().enumerate().all(|(k, &(_, b))| b as usize == k) {
            return words[0];
        }
        // One prmt per further word: the first takes two words, each later one keeps the bytes placed so far.
        let mut acc = words[0];
        let mut placed = vec![false; at.len()];
        let mut rest = words.iter().skip(1).peekable();
        let first = rest.next().copied();
        let mut step = |l: &mut Self, acc: Reg, a: Option<Reg>, b: Reg| {
            let sel: Vec<Option<u8>> = at
                .iter()
                .enumerate()
                .map(|(k, &(w, byte))| {
                    if Some(w) == a {
                        placed[k] = true;
                        Some(byte)
                    } else if w == b {
                        placed[k] = true;
                        Some(4 + byte)
                    } else if placed[k] {
                        Some(k as u8)
                    } else {
                        None
                    }
                })
                .collect();
            let d = l.b.reg(RegClass::B32);
            l.b.op("prmt.b32", d, (acc, b, selector(&sel)));
            d
        };
        acc = step(self, acc, Some(acc), first.unwrap_or(acc));
        for &w in rest {
            acc = step(self, acc, None, w);
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::selector;

    #[test]
    fn selectors_put_nibble_i_in_byte_i() {
        assert_eq!(selector(&[Some(0), Some(2), Some(4), Some(6)]), 0x6420);
        assert_eq!(selector(&[Some(3), None, Some(5)]), 0x503);
    }
}
