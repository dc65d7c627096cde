//! Building and running the parser frees everything it allocates. (A grammar tied with `Recursive::declare` is an
//! `Rc` cycle and leaked about 12 KiB on every `parse_module`; see `parser::expr::exprs`.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the bytes currently allocated.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
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
    let before = LIVE.load(Ordering::SeqCst);
    for _ in 0..20 {
        for src in sources {
            let _ = tessel_lang::parse_module(src);
        }
    }
    let leaked = LIVE.load(Ordering::SeqCst) - before;
    assert_eq!(leaked, 0, "{leaked} bytes still allocated after 60 parses");
}
