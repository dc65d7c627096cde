"""A lock that is taken and never released, and a loop that never ends: the interpreter must report both
(tests/cli_kernel.rs) rather than hang."""
import triton
import triton.language as tl


@triton.jit
def forgot_release(Lock, Out):
    pid = tl.program_id(0)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(Out + pid, pid)
    # The release, tl.atomic_xchg(Lock, 0), is missing: program 1 waits forever.


@triton.jit
def counts_forever(Out, n):
    i = 0
    while n > 0:
        i += 1
        tl.store(Out, i)


@triton.jit
def lock_released(Lock, Out):
    pid = tl.program_id(0)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(Out + pid, pid)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def long_for(Out, n):
    acc = 0
    for i in range(n):
        acc += i
    tl.store(Out, acc)
