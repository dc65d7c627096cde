//! The one deterministic random-number generator every crate's tests share (so that a seed means the same stream
//! everywhere and no test needs an extra crate; xorshift64*, fast and good enough for test data). It lives here,
//! in the lowest crate whose tests draw from it.

/// A seeded xorshift64* stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream for `seed` (any value; 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One of `items` (not empty).
    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> &'s T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// `n` values uniform in [-1, 1).
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }

    /// Approximately standard normal (a sum of 4 uniforms, rescaled): bell-shaped data with rare large values.
    pub fn normal(&mut self) -> f64 {
        (0..4).map(|_| self.uniform()).sum::<f64>() * (3.0f64 / 4.0).sqrt()
    }

    /// `n` values of [`Rng::normal`].
    pub fn normals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.normal()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn a_seed_is_one_stream_and_values_stay_in_range() {
        let (a, b) = (Rng::new(7).vec(1000), Rng::new(7).vec(1000));
        assert_eq!(a, b);
        assert_ne!(a, Rng::new(8).vec(1000));
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(mean.abs() < 0.1, "{mean}");
        let mut r = Rng::new(0);
        assert!((0..1000).all(|_| r.below(3) < 3));
    }
}
