//! The message reader allocates nothing per message in steady state: a benchmark client
//! parses millions of DataRow/CommandComplete/ReadyForQuery messages.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use hotbench_wire::{Message, MessageReader};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One select-only transaction's reply: RowDescription, DataRow, CommandComplete,
/// ReadyForQuery.
fn reply() -> Vec<u8> {
    let mut v = Vec::new();
    let mut msg = |tag: u8, body: &[u8]| {
        v.push(tag);
        v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        v.extend_from_slice(body);
    };
    let mut rd = vec![0, 1];
    rd.extend_from_slice(b"abalance\0");
    rd.extend_from_slice(&[
        0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 255, 255, 255, 255, 0, 0,
    ]);
    msg(b'T', &rd);
    msg(b'D', &[0, 1, 0, 0, 0, 4, b'1', b'2', b'3', b'4']);
    msg(b'C', b"SELECT 1\0");
    msg(b'Z', b"I");
    v
}

#[test]
fn steady_state_parsing_does_not_allocate() {
    let data = reply();
    let mut r = MessageReader::new();
    let run = |r: &mut MessageReader| {
        let mut n = 0;
        for _ in 0..100 {
            r.extend(&data);
            while let Some(m) = r.next_message().unwrap() {
                if let Message::DataRow(b) = &m {
                    assert_eq!(b.buffer().len(), 8);
                }
                n += 1;
            }
        }
        n
    };
    // Warm up: the buffer reaches its working size.
    run(&mut r);
    let before = ALLOCS.load(Ordering::Relaxed);
    let n = run(&mut r);
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(n, 400);
    assert_eq!(allocs, 0, "{allocs} allocations for {n} messages");
}
