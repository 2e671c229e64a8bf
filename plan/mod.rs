//! The stripe planner: what one stripe column must read, compute and write.
//!
//! A *column* is one block position across all members of a RAID 4/5/6 stripe (md's stripe
//! head: the same member offset on every member). Given which members are failed and which
//! blocks a write covers, [`plan_write`] picks md's read-modify-write or reconstruct-write by
//! the fewer member reads, or a degraded method that still keeps parity consistent;
//! [`plan_read`] says what to read to rebuild a failed member's block. [`recover`],
//! [`pre_write`] and [`post_write`] then do the arithmetic on in-memory blocks, one buffer per
//! member. The kernel side only moves blocks between members and those buffers.
//!
//! Everything here is `no_std` and depends on `core` (and the parity engine) only; the host
//! tests drive it through every failure combination against a model array.

// Safe code only: `unsafe` lives in `sys/` (and `parity/`'s SIMD).
#![deny(unsafe_code)]

use crate::layout::raid5::Raid5;
use crate::layout::MAX_MEMBERS;
use crate::parity::{self, Engine, Fpu};

/// The parity implementations a plan's arithmetic uses, one per kind of operation (as chosen
/// at load for `/sys/kernel/rraid/parity/{xor,gen,rmw,recov}`).
#[derive(Clone, Copy, Debug)]
pub struct Engines {
    /// RAID 4/5 parity and recovery from P.
    pub xor: Engine,
    /// RAID 6 P and Q of whole stripes.
    pub gen: Engine,
    /// RAID 6 read-modify-write (`xor_syndrome`).
    pub rmw: Engine,
    /// RAID 6 recovery through Q.
    pub recov: Engine,
}

impl Engines {
    /// One implementation for everything.
    pub fn all(e: Engine) -> Self {
        Self {
            xor: e,
            gen: e,
            rmw: e,
            recov: e,
        }
    }
}

/// A set of members, bit `i` for member `i`.
pub type Set = u64;

/// Why a stripe cannot be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// More members are failed than the level tolerates.
    TooManyFailed,
    /// A parity operation refused its arguments.
    Parity(parity::Error),
}

impl From<parity::Error> for Error {
    fn from(e: parity::Error) -> Self {
        Error::Parity(e)
    }
}

/// One column's shape: where P and Q are, the data order, and the failed members.
///
/// # Invariants
///
/// `members <= MAX_MEMBERS`; `pd`, `qd` and the first `members - parity` entries of `order` are
/// distinct members below `members`.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    members: usize,
    pd: usize,
    qd: Option<usize>,
    /// Data members in Q's coefficient order (RAID 6) or data order (RAID 4/5).
    order: [u8; MAX_MEMBERS],
    failed: Set,
    /// Parity may not match the data yet (beyond the resync point): writes reconstruct it.
    unsynced: bool,
}

fn count(s: Set) -> usize {
    s.count_ones() as usize
}

/// The members of `s`, lowest first.
pub fn bits(mut s: Set) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if s == 0 {
            return None;
        }
        let i = s.trailing_zeros() as usize;
        s &= s - 1;
        Some(i)
    })
}

impl Column {
    /// The column of `stripe` of `geo`, with `failed` members.
    pub fn new(geo: &Raid5, stripe: u64, failed: Set) -> Self {
        let sh = geo.shape(stripe);
        let mut order = [0u8; MAX_MEMBERS];
        for m in 0..geo.members() {
            let pos = match sh.qd {
                Some(_) => geo.q_index(sh, m),
                None => geo.data_index(sh, m),
            };
            if let Some(slot) = pos.and_then(|k| order.get_mut(k)) {
                *slot = m as u8;
            }
        }
        // INVARIANT: `Raid5` places P, Q and each data index on distinct members.
        Self {
            members: geo.members(),
            pd: sh.pd,
            qd: sh.qd,
            order,
            failed: failed & Self::all_of(geo.members()),
            unsynced: false,
        }
    }

    /// The same column where parity is not known to match the data (not resynced yet):
    /// read-modify-write, which trusts the old parity, is never chosen, as md forces
    /// reconstruct-write beyond its resync point.
    pub fn unsynced(mut self) -> Self {
        self.unsynced = true;
        self
    }

    fn all_of(n: usize) -> Set {
        if n >= 64 {
            u64::MAX
        } else {
            (1u64 << n) - 1
        }
    }

    /// Every member.
    pub fn all(&self) -> Set {
        Self::all_of(self.members)
    }

    /// The parity members (P, and Q on RAID 6).
    pub fn parity(&self) -> Set {
        (1u64 << self.pd) | self.qd.map_or(0, |q| 1u64 << q)
    }

    /// The data members.
    pub fn data(&self) -> Set {
        self.all() & !self.parity()
    }

    /// The failed members.
    pub fn failed(&self) -> Set {
        self.failed
    }

    /// The member holding P.
    pub fn pd(&self) -> usize {
        self.pd
    }

    /// The member holding Q, on RAID 6.
    pub fn qd(&self) -> Option<usize> {
        self.qd
    }

    /// Data members in Q coefficient order (data order on RAID 4/5).
    pub fn order(&self) -> &[u8] {
        let n = self.members - count(self.parity());
        self.order.get(..n).unwrap_or(&[])
    }

    /// Members that may fail before data is lost.
    pub fn tolerance(&self) -> usize {
        count(self.parity())
    }

    fn check(&self) -> Result<(), Error> {
        if count(self.failed) > self.tolerance() {
            Err(Error::TooManyFailed)
        } else {
            Ok(())
        }
    }
}

/// How a write keeps parity right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Reconstruct-write: parity from all data blocks, old ones read.
    Rcw,
    /// Read-modify-write: parity updated by the written blocks' old and new contents.
    Rmw,
    /// No parity member is left: only data is written.
    DataOnly,
    /// A needed old block is on a failed member: read every survivor, recover it, then as
    /// reconstruct-write.
    Reconstruct,
}

/// What a write to one column does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePlan {
    /// The method.
    pub method: Method,
    /// Members whose old blocks are read first.
    pub read: Set,
    /// Failed members whose old blocks are computed from the ones read.
    pub recover: Set,
    /// Members written.
    pub write: Set,
}

/// Plans a write of `written` data members of `col`, `full` of them overwritten whole (the rest
/// partly, so their old block is needed to merge).
///
/// Picks the method with the fewest reads, reconstruct-write on a tie, as md does.
pub fn plan_write(col: &Column, written: Set, full: Set) -> Result<WritePlan, Error> {
    col.check()?;
    let data = col.data();
    let written = written & data;
    let full = full & written;
    let failed = col.failed;
    let alive = col.all() & !failed;
    let parity_alive = col.parity() & alive;
    if written == 0 {
        return Ok(WritePlan {
            method: Method::Rcw,
            read: 0,
            recover: 0,
            write: 0,
        });
    }
    if parity_alive == 0 {
        return Ok(WritePlan {
            method: Method::DataOnly,
            read: written & !full & alive,
            recover: 0,
            write: written & alive,
        });
    }
    let write = (written | parity_alive) & alive;
    let rcw_need = data & !full;
    let rcw = (rcw_need & failed == 0).then_some(count(rcw_need));
    let rmw_need = written | parity_alive;
    let rmw = (written & failed == 0 && !col.unsynced).then_some(count(rmw_need));
    let plan = match (rcw, rmw) {
        (Some(c), Some(m)) if m < c => (Method::Rmw, rmw_need, 0),
        (Some(_), _) => (Method::Rcw, rcw_need, 0),
        (None, Some(_)) => (Method::Rmw, rmw_need, 0),
        (None, None) => (Method::Reconstruct, alive, failed & data),
    };
    Ok(WritePlan {
        method: plan.0,
        read: plan.1,
        recover: plan.2,
        write,
    })
}

/// Plans a write that also rewrites the blocks of `rewrite`, members counted as failed in
/// `col` because a read from them failed: their blocks are recomputed from the others and
/// written back (md's read-error repair), so the column must be known whole.
pub fn plan_rewrite(
    col: &Column,
    written: Set,
    full: Set,
    rewrite: Set,
) -> Result<WritePlan, Error> {
    let base = plan_write(col, written, full)?;
    let rewrite = rewrite & col.failed;
    if rewrite == 0 {
        return Ok(base);
    }
    if base.method == Method::Rcw && written & col.data() != 0 {
        // Every data block is read or overwritten, and parity is computed whole.
        return Ok(WritePlan {
            write: base.write | rewrite,
            ..base
        });
    }
    let alive = col.all() & !col.failed;
    Ok(WritePlan {
        method: Method::Reconstruct,
        read: alive,
        recover: col.failed & col.data(),
        write: ((written & col.data()) | col.parity()) & alive | rewrite,
    })
}

/// What a read of failed members' blocks does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadPlan {
    /// Members read.
    pub read: Set,
    /// Failed data members recovered from them.
    pub recover: Set,
}

/// Plans rebuilding the blocks of the failed data members in `want`.
///
/// Reads every surviving data member and P; Q only where P alone cannot do it.
pub fn plan_read(col: &Column, want: Set) -> Result<ReadPlan, Error> {
    col.check()?;
    let data = col.data();
    let lost = col.failed & data;
    if want & lost == 0 {
        return Ok(ReadPlan {
            read: 0,
            recover: 0,
        });
    }
    let alive = col.all() & !col.failed;
    let p = 1u64 << col.pd;
    let p_lost = col.failed & p != 0;
    let mut read = alive & (data | p);
    if let Some(q) = col.qd {
        if count(lost) == 2 || p_lost {
            read |= (1u64 << q) & alive;
        }
    }
    Ok(ReadPlan {
        read,
        recover: lost,
    })
}

/// Splits the member buffers into shared data blocks (in column order) and the P and Q buffers
/// taken out for writing; the taken slots are left empty and put back by the caller.
struct Split<'a> {
    p: &'a mut [u8],
    q: Option<&'a mut [u8]>,
}

fn take<'a>(bufs: &mut [&'a mut [u8]], m: usize) -> Result<&'a mut [u8], Error> {
    bufs.get_mut(m)
        .map(core::mem::take)
        .ok_or(Error::Parity(parity::Error::BadIndex))
}

fn put<'a>(bufs: &mut [&'a mut [u8]], m: usize, b: &'a mut [u8]) {
    if let Some(slot) = bufs.get_mut(m) {
        *slot = b;
    }
}

/// Runs `f` with P and Q taken out of `bufs`, and puts them back.
fn with_pq<R>(
    col: &Column,
    bufs: &mut [&mut [u8]],
    f: impl FnOnce(&mut Split<'_>, &[&mut [u8]]) -> Result<R, Error>,
) -> Result<R, Error> {
    let p = take(bufs, col.pd)?;
    let q = match col.qd {
        Some(qd) => Some(take(bufs, qd)?),
        None => None,
    };
    let mut split = Split { p, q };
    let res = f(&mut split, bufs);
    if let Some(qd) = col.qd {
        if let Some(q) = split.q {
            put(bufs, qd, q);
        }
    }
    put(bufs, col.pd, split.p);
    res
}

/// Gathers shared views of the blocks of `members` (in the given order) into `out`.
fn gather<'b>(
    bufs: &'b [&mut [u8]],
    members: impl Iterator<Item = usize>,
    out: &mut [&'b [u8]; MAX_MEMBERS],
) -> usize {
    let mut n = 0;
    for m in members {
        if let (Some(b), Some(slot)) = (bufs.get(m), out.get_mut(n)) {
            *slot = &b[..];
            n += 1;
        }
    }
    n
}

/// Recomputes the blocks of the failed data members from the blocks of the others, which must
/// hold what is on those members now (P and Q included as [`plan_read`] asks).
pub fn recover(
    eng: &Engines,
    fpu: &dyn Fpu,
    col: &Column,
    bufs: &mut [&mut [u8]],
) -> Result<(), Error> {
    col.check()?;
    let lost = col.failed & col.data();
    let order = col.order();
    let lost_pos = |k: usize| order.get(k).is_some_and(|&m| lost & (1u64 << m) != 0);
    let n_lost = count(lost);
    if n_lost == 0 {
        return Ok(());
    }
    let p_ok = col.failed & (1u64 << col.pd) == 0;
    if n_lost == 1 && p_ok {
        // One data block from P: the XOR of P and the other data blocks.
        let x = bits(lost).next().unwrap_or(0);
        let dx = take(bufs, x)?;
        let res = with_pq(col, bufs, |s, rest| {
            let mut srcs: [&[u8]; MAX_MEMBERS] = [&[]; MAX_MEMBERS];
            let n = gather(
                rest,
                order.iter().map(|&m| m as usize).filter(|&m| m != x),
                &mut srcs,
            );
            eng.xor
                .recover_data_p(fpu, srcs.get(..n).unwrap_or(&[]), s.p, dx)?;
            Ok(())
        });
        put(bufs, x, dx);
        return res;
    }
    // RAID 6 from here: Q is needed, and the positions are Q's coefficient indices.
    let mut pos = (0..order.len()).filter(|&k| lost_pos(k));
    let xi = pos.next().ok_or(Error::TooManyFailed)?;
    let yi = pos.next();
    let xm = order
        .get(xi)
        .map(|&m| m as usize)
        .ok_or(Error::TooManyFailed)?;
    let dx = take(bufs, xm)?;
    let res = match yi {
        None => with_pq(col, bufs, |s, rest| {
            let mut srcs: [&[u8]; MAX_MEMBERS] = [&[]; MAX_MEMBERS];
            let n = gather(
                rest,
                order.iter().map(|&m| m as usize).filter(|&m| m != xm),
                &mut srcs,
            );
            let q = s.q.as_deref().ok_or(Error::TooManyFailed)?;
            eng.recov
                .recover_data_q(fpu, xi, srcs.get(..n).unwrap_or(&[]), q, dx, s.p)?;
            Ok(())
        }),
        Some(yi) => {
            let ym = order
                .get(yi)
                .map(|&m| m as usize)
                .ok_or(Error::TooManyFailed)?;
            let dy = take(bufs, ym)?;
            let res = with_pq(col, bufs, |s, rest| {
                let mut srcs: [&[u8]; MAX_MEMBERS] = [&[]; MAX_MEMBERS];
                let others = order
                    .iter()
                    .map(|&m| m as usize)
                    .filter(|&m| m != xm && m != ym);
                let n = gather(rest, others, &mut srcs);
                let q = s.q.as_deref().ok_or(Error::TooManyFailed)?;
                let survivors = srcs.get(..n).unwrap_or(&[]);
                eng.recov
                    .recover_2data(fpu, xi, yi, survivors, s.p, q, dx, dy)?;
                Ok(())
            });
            put(bufs, ym, dy);
            res
        }
    };
    put(bufs, xm, dx);
    res
}

/// Folds the blocks of `members` in or out of P and Q (read-modify-write's half step).
fn fold(
    eng: &Engines,
    fpu: &dyn Fpu,
    col: &Column,
    members: Set,
    bufs: &mut [&mut [u8]],
) -> Result<(), Error> {
    let order = col.order();
    with_pq(col, bufs, |s, rest| {
        for (k, &m) in order.iter().enumerate() {
            let m = m as usize;
            if members & (1u64 << m) == 0 {
                continue;
            }
            let d: &[u8] = rest.get(m).ok_or(Error::Parity(parity::Error::BadIndex))?;
            match s.q.as_deref_mut() {
                Some(q) => eng
                    .rmw
                    .xor_syndrome(fpu, k, core::slice::from_ref(&d), s.p, q)?,
                None => eng.xor.xor_acc(fpu, s.p, core::slice::from_ref(&d))?,
            }
        }
        Ok(())
    })
}

/// The step between reading old blocks and merging the new data into the buffers: recovers
/// failed members' old blocks, or takes the old data out of parity for read-modify-write.
pub fn pre_write(
    eng: &Engines,
    fpu: &dyn Fpu,
    col: &Column,
    plan: &WritePlan,
    written: Set,
    bufs: &mut [&mut [u8]],
) -> Result<(), Error> {
    match plan.method {
        Method::Reconstruct => recover(eng, fpu, col, bufs),
        Method::Rmw => fold(eng, fpu, col, written & col.data(), bufs),
        Method::Rcw | Method::DataOnly => Ok(()),
    }
}

/// The step after merging the new data: computes P (and Q) from all data blocks, or folds the
/// new data into parity for read-modify-write.
pub fn post_write(
    eng: &Engines,
    fpu: &dyn Fpu,
    col: &Column,
    plan: &WritePlan,
    written: Set,
    bufs: &mut [&mut [u8]],
) -> Result<(), Error> {
    match plan.method {
        Method::Rmw => fold(eng, fpu, col, written & col.data(), bufs),
        Method::Rcw | Method::Reconstruct => {
            if plan.write == 0 {
                return Ok(());
            }
            gen_parity(eng, fpu, col, bufs)
        }
        Method::DataOnly => Ok(()),
    }
}

/// Computes P (and Q) from all data blocks of the column: reconstruct-write's last step, and
/// what resync, check and repair compare with the parity read.
pub fn gen_parity(
    eng: &Engines,
    fpu: &dyn Fpu,
    col: &Column,
    bufs: &mut [&mut [u8]],
) -> Result<(), Error> {
    let order = col.order();
    with_pq(col, bufs, |s, rest| {
        let mut srcs: [&[u8]; MAX_MEMBERS] = [&[]; MAX_MEMBERS];
        let n = gather(rest, order.iter().map(|&m| m as usize), &mut srcs);
        let data = srcs.get(..n).unwrap_or(&[]);
        match s.q.as_deref_mut() {
            Some(q) => eng.gen.gen_syndrome(fpu, data, s.p, q)?,
            None => eng.xor.xor_gen(fpu, s.p, data)?,
        }
        Ok(())
    })
}
