//! pgbench's integer hash functions (`hash_fnv1a`, `hash_murmur2`) and the
//! seeded pseudorandom permutation `permute`, bit-for-bit.

use crate::prng::PrngState;

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// pgbench `getHashFnv1a`.
pub fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed;
    let mut v = val;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        result ^= octet;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// pgbench `getHashMurmur2` (64-bit MurmurHash2 of one 8-byte value).
pub fn hash_murmur2(val: i64, seed: u64) -> i64 {
    let mut result = seed ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench `permute(val, size, seed)`: a bijection of `[0, size)` chosen by
/// `seed`; 0 when `size < 2`. (The caller rejects `size <= 0` first.)
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut state = PrngState::seed(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = state.u64_range(0, size - 1);
        v = (v.wrapping_add(r)) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_is_a_bijection() {
        for size in [2i64, 3, 7, 8, 100, 1000] {
            for seed in [0i64, 1, -5, 123_456_789] {
                let mut seen = vec![false; size as usize];
                for v in 0..size {
                    let p = permute(v, size, seed);
                    assert!((0..size).contains(&p));
                    assert!(!seen[p as usize], "duplicate for size {size} seed {seed}");
                    seen[p as usize] = true;
                }
            }
        }
        assert_eq!(permute(5, 1, 0), 0);
    }
}
