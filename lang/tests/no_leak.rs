//! Building and running the parser frees everything it allocates. (A grammar tied with `Recursive::declare` is an
//! `Rc` cycle and leaked about 12 KiB on every `parse_module`; see `parser::expr::exprs`.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the bytes each thread has allocated and not freed. Per thread: the test
/// harness's own threads (output capture, the slow-test timer) allocate while the parses run, which made a
/// global count fail on a busy machine.
struct Counting;

thread_local! {
    // Constant-initialized and without a destructor: reading it never allocates.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.with(|l| l.set(l.get() + layout.size() as isize));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.with(|l| l.set(l.get() - layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn parsing_does_not_leak() {
    let sources = [include_str!("corpus/matmul.py"), "x = (1,\n", "def f():\n    yield 1\n"];
    // The first parse may initialize lazily allocated state (stack growth bookkeeping).
    for src in sources {
        let _ = tessel_lang::parse_module(src);
    }
    let before = LIVE.with(Cell::get);
    for _ in 0..20 {
        for src in sources {
            let _ = tessel_lang::parse_module(src);
        }
    }
    let leaked = LIVE.with(Cell::get) - before;
    assert_eq!(leaked, 0, "{leaked} bytes still allocated after 60 parses");
}
