// rust_leak.rs - a Rust program for the symbol and leak checks: v0-mangled names, inlined std frames
use std::hint::black_box;

const LEAKS: u64 = 100;
const KEPT: u64 = 1000;

#[inline(never)]
fn leak_node(i: u64) -> &'static mut [u64; 32] {
    let b = Box::new([i; 32]); // HS-RUST-LEAK-SITE
    Box::leak(black_box(b))
}

#[inline(never)]
fn fill(list: &mut Vec<Vec<u8>>, i: u64) {
    list.push(vec![i as u8; 100]); // HS-RUST-FILL-SITE
}

fn main() {
    let mut list = Vec::with_capacity(KEPT as usize);
    let mut sum = 0u64;
    for i in 0..KEPT {
        fill(&mut list, i);
        if i % (KEPT / LEAKS) == 0 {
            sum += leak_node(i)[0];
        }
    }
    black_box(&list);
    println!("figures: leaks={} bytes={} sum={}", LEAKS, LEAKS * 256, sum);
}
