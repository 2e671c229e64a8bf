//! The stripe planner against a model array.
//!
//! Members are byte vectors, one block per stripe; every write goes through `plan_write`,
//! `pre_write`, a merge of the new data and `post_write`, exactly as the kernel carries a plan
//! out, with unread buffers full of garbage. After every operation each data block must read
//! back (through `plan_read` and `recover` where its member is failed) as the model says, and
//! on a whole column P and Q must match the data. Every failure set within the tolerance is
//! driven, on every layout.

use rraid_host_tests::layout::raid5::{Algorithm, Raid5};
use rraid_host_tests::parity::{Engine, UserFpu};
use rraid_host_tests::plan::{self, Column, Engines, Method};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

const BLOCK: usize = 128;
const STRIPES: u64 = 6;

struct Model {
    geo: Raid5,
    /// disk[m][stripe] = the block on member m.
    disk: Vec<Vec<Vec<u8>>>,
    /// data[stripe][k] = what data index k of the stripe must read as.
    data: Vec<Vec<Vec<u8>>>,
}

impl Model {
    fn new(geo: Raid5, eng: &Engines, rng: &mut Rng) -> Self {
        let n = geo.members();
        let mut disk = vec![vec![vec![0u8; BLOCK]; STRIPES as usize]; n];
        let mut data = vec![vec![vec![0u8; BLOCK]; geo.data()]; STRIPES as usize];
        // A consistent start: random data, parity computed with no failure.
        for s in 0..STRIPES {
            let col = Column::new(&geo, s, 0);
            let mut bufs: Vec<Vec<u8>> = vec![vec![0u8; BLOCK]; n];
            for k in 0..geo.data() {
                let m = geo.data_member(geo.shape(s), k);
                rng.fill(&mut bufs[m]);
                data[s as usize][k] = bufs[m].clone();
            }
            let all = col.data();
            let p = plan::plan_write(&col, all, all).unwrap();
            assert_eq!(p.method, Method::Rcw);
            assert_eq!(p.read, 0, "a full-stripe write reads nothing");
            let mut refs: Vec<&mut [u8]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
            plan::pre_write(eng, &UserFpu, &col, &p, all, &mut refs).unwrap();
            plan::post_write(eng, &UserFpu, &col, &p, all, &mut refs).unwrap();
            for m in 0..n {
                disk[m][s as usize] = bufs[m].clone();
            }
        }
        Model { geo, disk, data }
    }

    fn write(&mut self, eng: &Engines, rng: &mut Rng, s: u64, failed: u64, rewrite: u64) {
        let geo = self.geo;
        let n = geo.members();
        let sh = geo.shape(s);
        let col = Column::new(&geo, s, failed | rewrite);
        let mut written = 0u64;
        let mut full = 0u64;
        for k in 0..geo.data() {
            if rng.below(3) == 0 {
                let m = geo.data_member(sh, k);
                written |= 1 << m;
                if rng.below(2) == 0 {
                    full |= 1 << m;
                }
            }
        }
        let p = plan::plan_rewrite(&col, written, full, rewrite).unwrap();
        assert_eq!(p.read & (failed | rewrite), 0, "plan reads a failed member");
        assert_eq!(p.write & failed, 0, "plan writes a failed member");
        assert_eq!(
            p.write & rewrite,
            rewrite,
            "plan does not rewrite the bad member"
        );
        let mut bufs: Vec<Vec<u8>> = (0..n)
            .map(|m| {
                if p.read & (1 << m) != 0 {
                    self.disk[m][s as usize].clone()
                } else {
                    let mut g = vec![0u8; BLOCK];
                    rng.fill(&mut g);
                    g
                }
            })
            .collect();
        {
            let mut refs: Vec<&mut [u8]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
            plan::pre_write(eng, &UserFpu, &col, &p, written, &mut refs).unwrap();
        }
        for k in 0..geo.data() {
            let m = geo.data_member(sh, k);
            if written & (1 << m) == 0 {
                continue;
            }
            let (a, b) = if full & (1 << m) != 0 {
                (0, BLOCK)
            } else {
                let a = rng.below(BLOCK as u64) as usize;
                (a, a + 1 + rng.below((BLOCK - a) as u64) as usize)
            };
            let mut new = vec![0u8; b - a];
            rng.fill(&mut new);
            bufs[m][a..b].copy_from_slice(&new);
            self.data[s as usize][k][a..b].copy_from_slice(&new);
        }
        {
            let mut refs: Vec<&mut [u8]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
            plan::post_write(eng, &UserFpu, &col, &p, written, &mut refs).unwrap();
        }
        for m in 0..n {
            if p.write & (1 << m) != 0 {
                self.disk[m][s as usize] = bufs[m].clone();
            }
        }
    }

    /// Reads every data block of stripe `s` as the kernel would, and checks it.
    fn check(&self, eng: &Engines, rng: &mut Rng, s: u64, failed: u64, what: &str) {
        let geo = self.geo;
        let n = geo.members();
        let sh = geo.shape(s);
        let col = Column::new(&geo, s, failed);
        let want = col.data() & failed;
        let rp = plan::plan_read(&col, want).unwrap();
        assert_eq!(rp.read & failed, 0);
        let mut bufs: Vec<Vec<u8>> = (0..n)
            .map(|m| {
                if rp.read & (1 << m) != 0 {
                    self.disk[m][s as usize].clone()
                } else {
                    let mut g = vec![0u8; BLOCK];
                    rng.fill(&mut g);
                    g
                }
            })
            .collect();
        if want != 0 {
            let mut refs: Vec<&mut [u8]> = bufs.iter_mut().map(|b| &mut b[..]).collect();
            plan::recover(eng, &UserFpu, &col, &mut refs).unwrap();
        }
        for k in 0..geo.data() {
            let m = geo.data_member(sh, k);
            let got = if failed & (1 << m) != 0 {
                &bufs[m]
            } else {
                &self.disk[m][s as usize]
            };
            assert!(
                got == &self.data[s as usize][k],
                "{what}: stripe {s} data {k} (member {m}) reads wrong, failed {failed:#x}"
            );
        }
    }
}

fn failure_sets(n: usize, tol: usize) -> Vec<u64> {
    let mut v = vec![0u64];
    for a in 0..n {
        v.push(1 << a);
        if tol == 2 {
            for b in a + 1..n {
                v.push(1 << a | 1 << b);
            }
        }
    }
    v
}

fn run(level: u8, algo: Algorithm, n: usize, eng: &Engines, rng: &mut Rng) {
    let sizes = vec![8 * STRIPES; n];
    let geo = Raid5::new(level, algo, &sizes, 8, None, 0).unwrap();
    let tol = geo.parity();
    for failed in failure_sets(n, tol) {
        let mut model = Model::new(geo, eng, rng);
        let what = format!("raid{level} {:?} n={n}", algo);
        for _ in 0..40 {
            let s = rng.below(STRIPES);
            // Now and then a member's read fails during the write: it is rewritten whole.
            let mut rewrite = 0;
            if (failed.count_ones() as usize) < tol && rng.below(4) == 0 {
                let m = rng.below(n as u64);
                if failed & (1 << m) == 0 {
                    rewrite = 1 << m;
                    // Its block is unreadable: the model keeps garbage there until rewritten.
                    rng.fill(&mut model.disk[m as usize][s as usize]);
                }
            }
            model.write(eng, rng, s, failed, rewrite);
            model.check(eng, rng, s, failed, &what);
        }
        for s in 0..STRIPES {
            model.check(eng, rng, s, failed, &what);
        }
        // Parity still implies every lost block when all members come back into view: with
        // the failed members' stale contents replaced by what they should hold, the column is
        // consistent. Checked through a fresh failure of each single member.
        for s in 0..STRIPES {
            for extra in 0..n {
                let f = failed | 1 << extra;
                if (f.count_ones() as usize) <= tol {
                    model.check(eng, rng, s, f, &what);
                }
            }
        }
    }
}

#[test]
fn every_layout_every_failure_set() {
    let eng = Engines::all(Engine::scalar());
    let mut rng = Rng(0x5eed_0f_5a1e);
    for algo in Algorithm::ALL {
        for n in [2, 3, 4, 5, 8] {
            run(5, algo, n, &eng, &mut rng);
        }
        for n in [4, 5, 6, 8] {
            run(6, algo, n, &eng, &mut rng);
        }
    }
    for n in [2, 3, 5] {
        run(4, Algorithm::ParityLast, n, &eng, &mut rng);
    }
}

#[test]
fn reads_follow_md_rmw_rcw_choice() {
    // 8-member RAID 5: a one-block write reads old data and P (2 blocks), not 6.
    let geo = Raid5::new(5, Algorithm::LeftSymmetric, &[64; 8], 8, None, 0).unwrap();
    let col = Column::new(&geo, 0, 0);
    let m = geo.data_member(geo.shape(0), 3);
    let p = plan::plan_write(&col, 1 << m, 1 << m).unwrap();
    assert_eq!(p.method, Method::Rmw);
    assert_eq!(p.read.count_ones(), 2);
    // Six of seven blocks written whole: reconstruct-write reads 1.
    let w = col.data() & !(1 << m);
    let p = plan::plan_write(&col, w, w).unwrap();
    assert_eq!(p.method, Method::Rcw);
    assert_eq!(p.read, 1 << m);
    // Too many failed.
    let col = Column::new(&geo, 0, 0b11);
    assert_eq!(
        plan::plan_write(&col, 1, 1),
        Err(plan::Error::TooManyFailed)
    );
}

#[test]
fn unsynced_columns_never_trust_old_parity() {
    // The write that reads 2 blocks by read-modify-write on a synced column reconstructs
    // parity from all data when the column is beyond the resync point, as md forces rcw there.
    let geo = Raid5::new(6, Algorithm::LeftSymmetric, &[64; 8], 8, None, 0).unwrap();
    let col = Column::new(&geo, 3, 0).unsynced();
    let m = geo.data_member(geo.shape(3), 2);
    let p = plan::plan_write(&col, 1 << m, 1 << m).unwrap();
    assert_eq!(p.method, Method::Rcw);
    assert_eq!(p.read, col.data() & !(1 << m));
    assert_eq!(p.write, (1 << m) | col.parity());
    // And the parity it computes matches the data: P is the XOR of the data blocks.
    let eng = Engines::all(Engine::scalar());
    let mut rng = Rng(7);
    let mut blocks: Vec<Vec<u8>> = (0..8)
        .map(|_| (0..4096).map(|_| rng.next() as u8).collect())
        .collect();
    let mut bufs: Vec<&mut [u8]> = blocks.iter_mut().map(|b| b.as_mut_slice()).collect();
    plan::gen_parity(&eng, &UserFpu, &col, &mut bufs).unwrap();
    let mut x = vec![0u8; 4096];
    for d in plan::bits(col.data()) {
        for (a, b) in x.iter_mut().zip(bufs[d].iter()) {
            *a ^= b;
        }
    }
    assert_eq!(&x[..], &bufs[col.pd()][..]);
}
