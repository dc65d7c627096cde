//! The interpreter's global memory: typed buffers at distinct, far-apart addresses, with bounds checks, so an
//! out-of-bounds access is reported (with the buffer and offset) instead of silently reading garbage.

use std::fmt;

use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::types::ScalarType;

/// Buffer `i` starts at `(i + 1) << ADDRESS_SHIFT`.
const ADDRESS_SHIFT: u32 = 40;

/// The address a pointer holds once its address arithmetic has left the 64 bits (an offset far outside any
/// buffer, which the GPU would wrap around to some other address): in the last region, where no buffer lies,
/// and kept by any further arithmetic ([`offset_address`]), so that an access through it is reported.
const WRAPPED: u64 = u64::MAX << ADDRESS_SHIFT;

/// `base + offset` (in bytes), or [`WRAPPED`] when the sum leaves 0..2^64 or `base` has wrapped before: the
/// interpreter's address arithmetic never wraps into another buffer.
pub fn offset_address(base: u64, offset: i128) -> u64 {
    let at = base as i128 + offset;
    if base >= WRAPPED || !(0..WRAPPED as i128).contains(&at) { WRAPPED } else { at as u64 }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferId(pub u32);

/// A global-memory access the buffers do not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessError {
    /// The pointer's address arithmetic left the 64 bits (an offset far outside any buffer).
    Overflow,
    /// An address inside no buffer.
    Unmapped { addr: u64 },
    /// Element `index` of a buffer of `len` elements.
    OutOfBounds { buffer: String, index: usize, len: usize },
    /// An access of `elem` at a byte offset that is not a multiple of its size.
    Misaligned { elem: ScalarType, offset: u64, buffer: String },
    /// A buffer of `holds` accessed as `accessed`, of another size.
    ElementType { buffer: String, holds: ScalarType, accessed: ScalarType },
}

impl AccessError {
    /// Outside every buffer: an index past the end, an address no buffer holds, an overflowed offset.
    pub fn is_out_of_bounds(&self) -> bool {
        matches!(self, AccessError::Overflow | AccessError::Unmapped { .. } | AccessError::OutOfBounds { .. })
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::Overflow => f.write_str(
                "out-of-bounds access: the pointer's address arithmetic overflowed 64 bits (an offset far outside \
                 any buffer, which the GPU would wrap around to another address)",
            ),
            AccessError::Unmapped { addr } => write!(f, "address {addr:#x} is not inside any buffer"),
            AccessError::OutOfBounds { buffer, index, len } => {
                write!(f, "out-of-bounds access: element {index} of buffer `{buffer}`, which has {len} elements")
            }
            AccessError::Misaligned { elem, offset, buffer } => {
                write!(f, "misaligned {elem} access at byte {offset} of buffer `{buffer}`")
            }
            AccessError::ElementType { buffer, holds, accessed } => {
                write!(f, "buffer `{buffer}` holds {holds} but is accessed as {accessed}")
            }
        }
    }
}

impl std::error::Error for AccessError {}

/// The memory the system can still give this process without swapping, in bytes (Linux's `MemAvailable`);
/// `None` where it is not known. Allocations larger than this are refused before they are tried: on Linux an
/// allocation larger than the memory left usually succeeds and the process is killed when it touches the pages.
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.trim_start_matches("MemAvailable:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// `n` bytes in the largest binary unit that keeps the number at least 1 (`4.0 TiB`, `512 bytes`).
pub fn show_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let (mut x, mut unit) = (n as f64 / 1024.0, 0);
    while x >= 1024.0 && unit < UNITS.len() - 1 {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

/// Why there is no host memory for something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortage {
    /// `bytes` is more than the `available` memory.
    MoreThanAvailable { bytes: u64, available: u64 },
    /// The system refused an allocation of `bytes`.
    AllocationFailed { bytes: u64 },
    /// No memory for the list of buffers of a copy of the memory.
    BufferList,
}

impl fmt::Display for Shortage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Shortage::MoreThanAvailable { bytes, available } => write!(
                f,
                "{} ({bytes} bytes) is more than the {} of memory available",
                show_bytes(bytes),
                show_bytes(available)
            ),
            Shortage::AllocationFailed { bytes } => {
                write!(f, "allocating {} ({bytes} bytes) failed: not enough memory", show_bytes(bytes))
            }
            Shortage::BufferList => f.write_str("no memory to copy the buffers"),
        }
    }
}

impl std::error::Error for Shortage {}

/// An error unless `n` bytes fit in the memory available ([`available_bytes`]).
pub fn check_available(n: u64) -> Result<(), Shortage> {
    match available_bytes() {
        Some(available) if n > available => Err(Shortage::MoreThanAvailable { bytes: n, available }),
        _ => Ok(()),
    }
}

fn failed(n: u64) -> Shortage {
    Shortage::AllocationFailed { bytes: n }
}

/// `n` zero bytes, or why there is no memory for them: more than the memory available, or an allocation the
/// system refuses. Never aborts the process (as `vec![0; n]` does when the allocation fails).
pub fn try_zeroed(n: usize) -> Result<Vec<u8>, Shortage> {
    check_available(n as u64)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| failed(n as u64))?;
    v.resize(n, 0);
    Ok(v)
}

#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub elem: ScalarType,
    pub bytes: Vec<u8>,
}

impl Buffer {
    pub fn len(&self) -> usize {
        self.bytes.len() / self.elem.bytes() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[derive(Clone, Debug, Default)]
pub struct Memory {
    buffers: Vec<Buffer>,
    /// Stores that changed a byte of some buffer, so far (the interpreter's spin-wait detection compares it
    /// before and after a loop iteration).
    changes: u64,
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// A buffer of `len` elements of `elem`, zero-filled.
    pub fn alloc(&mut self, name: impl Into<String>, elem: ScalarType, len: usize) -> BufferId {
        self.buffers.push(Buffer { name: name.into(), elem, bytes: vec![0; len * elem.bytes() as usize] });
        BufferId(self.buffers.len() as u32 - 1)
    }

    /// A buffer holding `bytes`, little-endian elements of `elem` taken as they are (the exact way in: every
    /// dtype's full range and NaN payloads included).
    pub fn alloc_bytes(&mut self, name: impl Into<String>, elem: ScalarType, bytes: Vec<u8>) -> BufferId {
        assert_eq!(bytes.len() % elem.bytes() as usize, 0, "alloc_bytes: not a whole number of {elem} elements");
        self.buffers.push(Buffer { name: name.into(), elem, bytes });
        BufferId(self.buffers.len() as u32 - 1)
    }

    /// A buffer holding `values` (converted to `elem` with rounding; a convenience for tests and examples:
    /// integers beyond 2^53 cannot be given this way, use [`Memory::alloc_bytes`]).
    pub fn alloc_from(&mut self, name: impl Into<String>, elem: ScalarType, values: &[f64]) -> BufferId {
        let id = self.alloc(name, elem, values.len());
        self.write_f64(id, values);
        id
    }

    /// How many buffers there are (their ids are 0..count).
    pub fn buffer_count(&self) -> usize {
        self.buffers.len()
    }

    pub fn buffer(&self, id: BufferId) -> &Buffer {
        &self.buffers[id.0 as usize]
    }

    /// How many stores so far changed memory (a store of the value already there does not count).
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The address of element 0.
    pub fn base(&self, id: BufferId) -> u64 {
        (id.0 as u64 + 1) << ADDRESS_SHIFT
    }

    pub fn write_f64(&mut self, id: BufferId, values: &[f64]) {
        let elem = self.buffers[id.0 as usize].elem;
        for (i, &v) in values.iter().enumerate() {
            let val = if elem.is_float() {
                Val::Float(tessel_tile::eval::value::round_float(v, elem))
            } else {
                Val::Int(tessel_tile::eval::value::wrap_int(v as i64, elem))
            };
            let bits = self.encode(id, elem, val);
            self.set_raw(id, i, bits);
        }
    }

    /// A copy of the memory, or why there is no room for one (see [`try_zeroed`]): never aborts.
    pub fn try_clone(&self) -> Result<Memory, Shortage> {
        let total: u64 = self.buffers.iter().map(|b| b.bytes.len() as u64).sum();
        check_available(total)?;
        let mut buffers = Vec::new();
        buffers.try_reserve_exact(self.buffers.len()).map_err(|_| Shortage::BufferList)?;
        for b in &self.buffers {
            let mut bytes = Vec::new();
            bytes.try_reserve_exact(b.bytes.len()).map_err(|_| failed(b.bytes.len() as u64))?;
            bytes.extend_from_slice(&b.bytes);
            buffers.push(Buffer { name: b.name.clone(), elem: b.elem, bytes });
        }
        Ok(Memory { buffers, changes: self.changes })
    }

    /// Overwrites the bytes of buffer `id` from byte `at` on with `bytes` (which must fit).
    pub(crate) fn set_bytes_at(&mut self, id: BufferId, at: usize, bytes: &[u8]) {
        self.buffers[id.0 as usize].bytes[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Replaces a buffer's contents with raw bytes (e.g. copied back from a GPU); the length must match.
    pub fn set_bytes(&mut self, id: BufferId, bytes: &[u8]) {
        let b = &mut self.buffers[id.0 as usize];
        assert_eq!(b.bytes.len(), bytes.len(), "set_bytes: length of buffer `{}` changes", b.name);
        b.bytes.copy_from_slice(bytes);
    }

    /// Every element exactly, as the interpreter's values.
    pub fn read_vals(&self, id: BufferId) -> Vec<Val> {
        let b = &self.buffers[id.0 as usize];
        tessel_tile::eval::value::decode_vals(&b.bytes, b.elem)
    }

    /// Every element as `f64` (integers beyond 2^53 round: see [`Memory::read_vals`] for the exact values).
    pub fn read_f64(&self, id: BufferId) -> Vec<f64> {
        let b = &self.buffers[id.0 as usize];
        tessel_tile::eval::value::decode_le(&b.bytes, b.elem)
    }

    /// Resolves an address of an element of type `elem` to (buffer, element index), checking bounds and
    /// alignment.
    fn locate(&self, addr: u64, elem: ScalarType) -> Result<(BufferId, usize), AccessError> {
        let index = (addr >> ADDRESS_SHIFT) as usize;
        if addr >= WRAPPED {
            return Err(AccessError::Overflow);
        }
        if index == 0 || index > self.buffers.len() {
            return Err(AccessError::Unmapped { addr });
        }
        let id = BufferId(index as u32 - 1);
        let b = &self.buffers[id.0 as usize];
        let offset = addr - self.base(id);
        let size = elem.bytes() as u64;
        if offset % size != 0 {
            return Err(AccessError::Misaligned { elem, offset, buffer: b.name.clone() });
        }
        if b.elem.bytes() != elem.bytes() {
            return Err(AccessError::ElementType { buffer: b.name.clone(), holds: b.elem, accessed: elem });
        }
        let i = (offset / size) as usize;
        if i >= b.len() {
            return Err(AccessError::OutOfBounds { buffer: b.name.clone(), index: i, len: b.len() });
        }
        Ok((id, i))
    }

    pub fn load(&self, addr: u64, elem: ScalarType) -> Result<Val, AccessError> {
        let (id, i) = self.locate(addr, elem)?;
        Ok(self.decode(id, self.raw(id, i), elem))
    }

    pub fn store(&mut self, addr: u64, elem: ScalarType, v: Val) -> Result<(), AccessError> {
        let (id, i) = self.locate(addr, elem)?;
        let bits = self.encode(id, elem, v);
        self.set_raw(id, i, bits);
        Ok(())
    }

    /// The element an access of `elem` at `addr` lands on (bounds and alignment checked), as one number: the
    /// buffer in the upper bits, the index in the lower 40.
    pub(crate) fn slot(&self, addr: u64, elem: ScalarType) -> Result<u64, AccessError> {
        let (id, i) = self.locate(addr, elem)?;
        Ok(((id.0 as u64) << ADDRESS_SHIFT) | i as u64)
    }

    pub(crate) fn split(slot: u64) -> (BufferId, usize) {
        (BufferId((slot >> ADDRESS_SHIFT) as u32), (slot & ((1 << ADDRESS_SHIFT) - 1)) as usize)
    }

    /// The raw little-endian bits of the element at `slot`.
    pub(crate) fn raw_at(&self, slot: u64) -> u64 {
        let (id, i) = Self::split(slot);
        self.raw(id, i)
    }

    /// What a load of `elem` reads from `bits` of the buffer of `slot`: the buffer's own type decides the bits,
    /// reinterpreted if the access type differs in kind only.
    pub(crate) fn decode_at(&self, slot: u64, bits: u64, elem: ScalarType) -> Val {
        self.decode(Self::split(slot).0, bits, elem)
    }

    /// The bits a store of `v` as `elem` writes into the buffer of `slot`.
    pub(crate) fn encode_at(&self, slot: u64, elem: ScalarType, v: Val) -> u64 {
        self.encode(Self::split(slot).0, elem, v)
    }

    fn raw(&self, id: BufferId, i: usize) -> u64 {
        let b = &self.buffers[id.0 as usize];
        let n = b.elem.bytes() as usize;
        let mut raw = [0u8; 8];
        raw[..n].copy_from_slice(&b.bytes[i * n..(i + 1) * n]);
        u64::from_le_bytes(raw)
    }

    fn decode(&self, id: BufferId, bits: u64, elem: ScalarType) -> Val {
        let b_elem = self.buffers[id.0 as usize].elem;
        let v = from_bits(bits, b_elem);
        if b_elem == elem { v } else { from_bits(to_bits(v, b_elem), elem) }
    }

    fn encode(&self, id: BufferId, elem: ScalarType, v: Val) -> u64 {
        let b_elem = self.buffers[id.0 as usize].elem;
        let v = if b_elem == elem { v } else { from_bits(to_bits(v, elem), b_elem) };
        let n = b_elem.bytes();
        to_bits(v, b_elem) & if n == 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 }
    }

    fn set_raw(&mut self, id: BufferId, i: usize, bits: u64) {
        let b = &mut self.buffers[id.0 as usize];
        let n = b.elem.bytes() as usize;
        let slot = &mut b.bytes[i * n..(i + 1) * n];
        if *slot != bits.to_le_bytes()[..n] {
            slot.copy_from_slice(&bits.to_le_bytes()[..n]);
            self.changes += 1;
        }
    }
}
