//! md's write-intent bitmap of a live array (md-bitmap.c), in md's on-disk format
//! (`crate::meta::bitmap`).
//!
//! The sync space (member sectors; array sectors on RAID 10) is cut into bitmap chunks. A
//! chunk's bit is durable on the members before any write to the chunk is sent, and is
//! cleared once its writes have been done on every member for two daemon passes
//! (`daemon_sleep`), so after a crash only the chunks with bits set need a resync, and a
//! member that left for a while needs only the chunks written meanwhile.
//!
//! Each chunk has one atomic word, so the I/O path takes no lock where the bit is on disk:
//!
//! - the count of writes in flight to it (md's counter above 2);
//! - its state: clear; being set (in the page image, its write not yet done); set and
//!   written to lately (md's 2); set and idle for one pass (md's 1);
//! - `NEEDED`: a write to it ended while the array was degraded or failed, or a crash left it
//!   set; only a sync clears it (md's `NEEDED_MASK`); `RESYNC`: a sync took it on.
//!
//! Setting and clearing bits, and writing the pages, go under one mutex: a writer that finds
//! its chunk clear or being set takes it, and so waits for the write under way. The
//! completion side only counts down.

use crate::meta::bitmap::{self as fmt, BitmapSuper};
use crate::meta::super1::Version;
use crate::raid::Array;
use crate::sys::kthread;
use crate::sys::pagebuf::{PageBuf, PAGE_BYTES};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{alloc::KVVec, new_mutex, prelude::*, sync::Mutex};

/// Writes in flight to a chunk.
const INFLIGHT: u32 = 0x00ff_ffff;
/// The chunk's state.
const STATE: u32 = 3 << 24;
/// Clear: the bit is 0 on disk.
const CLEAR: u32 = 0;
/// Set, one daemon pass without writes (md's counter 1): cleared at the next.
const AGED: u32 = 1 << 24;
/// Set, written to since the last pass (md's counter 2).
const FRESH: u32 = 2 << 24;
/// Set in the page image, its page not yet written: writers wait for the mutex.
const SETTING: u32 = 3 << 24;
/// The chunk must be synced (md's `NEEDED_MASK`).
const NEEDED: u32 = 1 << 28;
/// A sync has taken the chunk on (md's `RESYNC_MASK`).
const RESYNC: u32 = 1 << 29;

/// Largest bitmap rraid keeps in memory: 1024 pages (4 MiB, 32 Mi chunks).
const MAX_PAGES: usize = 1024;

/// The pages of the bitmap as they are (or are about to be) on disk.
struct Disk {
    /// The bitmap superblock; encoded into page 0 for each write of it.
    sb: BitmapSuper,
    pages: KVec<PageBuf>,
    dirty: KVec<bool>,
    /// Bytes of the bitmap on disk (superblock and bits), in 512-byte units.
    bytes: usize,
}

impl Disk {
    /// Sets or clears chunk `chunk`'s bit in the page image, marking its page to be written.
    fn set_bit(&mut self, chunk: u64, on: bool) {
        let (p, at, mask) = bit_of(chunk);
        if let (Some(pg), Some(dt)) = (self.pages.get_mut(p), self.dirty.get_mut(p)) {
            if let Some(b) = pg.bytes_mut().get_mut(at) {
                if on {
                    *b |= mask;
                } else {
                    *b &= !mask;
                }
                *dt = true;
            }
        }
    }
}

/// The write-intent bitmap of an array.
#[pin_data]
pub struct Bitmap {
    version: Version,
    /// Sectors from each device's superblock to its bitmap.
    offset: i64,
    /// Bytes of the bitmap on disk, in 512-byte units (as `Disk::bytes`).
    bytes_512: usize,
    chunk_shift: u32,
    counts: KVVec<AtomicU32>,
    events_cleared: AtomicU64,
    /// `events_cleared` moved: the superblock holding it is written before any bit is
    /// cleared (md's `need_sync`; `can_clear` shows it).
    need_sync: AtomicBool,
    daemon_sleep_s: AtomicU32,
    last_pass_ns: AtomicU64,
    /// No chunk is set: the daemon has nothing to look at.
    allclean: AtomicBool,
    #[pin]
    disk: Mutex<Disk>,
}

/// Where a chunk's bit lies: the page and the byte and mask in it.
fn bit_of(chunk: u64) -> (usize, usize, u8) {
    let byte = fmt::SB_BYTES as u64 + chunk / 8;
    (
        (byte / PAGE_BYTES as u64) as usize,
        (byte % PAGE_BYTES as u64) as usize,
        1u8 << (chunk % 8),
    )
}

impl Bitmap {
    /// The bitmap of an array whose bitmap superblock is `sb`, `offset` sectors from each
    /// device's superblock. `image` is the bitmap as read from disk (superblock first), or
    /// `None` for a new array, whose bits are all set as mdadm writes them. Chunks set on disk
    /// are `NEEDED` from sector `needed_from` of the sync space on (md's `md_bitmap_load`).
    pub fn new(
        version: Version,
        offset: i64,
        sb: BitmapSuper,
        image: Option<&[u8]>,
        stale: bool,
        needed_from: u64,
    ) -> Result<Pin<KBox<Self>>> {
        let chunk_sectors = u64::from(sb.chunksize >> 9);
        if !chunk_sectors.is_power_of_two() {
            return Err(EINVAL);
        }
        let chunk_shift = chunk_sectors.trailing_zeros();
        let nchunks = fmt::chunks(sb.sync_size, sb.chunksize);
        let bytes =
            usize::try_from(fmt::bytes(sb.sync_size, sb.chunksize, 512)).map_err(|_| EINVAL)?;
        let npages = bytes.div_ceil(PAGE_BYTES);
        if npages == 0 || npages > MAX_PAGES {
            return Err(EINVAL);
        }
        let mut pages = KVec::with_capacity(npages, GFP_KERNEL)?;
        let mut dirty = KVec::with_capacity(npages, GFP_KERNEL)?;
        for p in 0..npages {
            let mut page = PageBuf::new(false)?;
            let b = page.bytes_mut();
            match image {
                Some(img) => {
                    b.fill(0);
                    let from = p * PAGE_BYTES;
                    if let Some(src) = img.get(from..(from + PAGE_BYTES).min(img.len())) {
                        if let Some(dst) = b.get_mut(..src.len()) {
                            dst.copy_from_slice(src);
                        }
                    }
                }
                None => b.fill(0xff),
            }
            pages.push(page, GFP_KERNEL)?;
            dirty.push(image.is_none(), GFP_KERNEL)?;
        }
        let n = usize::try_from(nchunks).map_err(|_| EINVAL)?;
        let mut counts = KVVec::with_capacity(n, GFP_KERNEL)?;
        for c in 0..nchunks {
            let (p, at, mask) = bit_of(c);
            let set = stale
                || pages
                    .get(p)
                    .and_then(|pg| pg.bytes().get(at))
                    .is_some_and(|b| b & mask != 0);
            let mut w = CLEAR;
            if set {
                w = FRESH;
                if (c + 1) << chunk_shift > needed_from {
                    w |= NEEDED;
                }
            }
            counts.push(AtomicU32::new(w), GFP_KERNEL)?;
        }
        if stale {
            for page in pages.iter_mut() {
                page.bytes_mut().fill(0xff);
            }
            for d in dirty.iter_mut() {
                *d = true;
            }
        }
        let events_cleared = sb.events_cleared;
        let daemon = sb.daemon_sleep;
        KBox::pin_init(
            pin_init!(Self {
                version,
                offset,
                bytes_512: bytes,
                chunk_shift,
                counts,
                events_cleared: AtomicU64::new(events_cleared),
                need_sync: AtomicBool::new(false),
                daemon_sleep_s: AtomicU32::new(daemon),
                last_pass_ns: AtomicU64::new(kthread::now_ns()),
                allclean: AtomicBool::new(false),
                disk <- new_mutex!(
                    Disk {
                        sb,
                        pages,
                        dirty,
                        bytes,
                    },
                    "rraid::bitmap"
                ),
            }),
            GFP_KERNEL,
        )
    }

    /// Bytes reserved on each device for the bitmap, as mdadm counts them (whole 4 KiB).
    pub fn reserved_bytes(&self) -> u64 {
        (self.bytes_512 as u64).div_ceil(4096) * 4096
    }

    /// md's `chunksize` file: bytes.
    pub fn chunk_bytes(&self) -> u64 {
        512u64 << self.chunk_shift
    }

    /// md's `location`: sectors from the superblock, signed.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// md's `time_base`: seconds between daemon passes.
    pub fn daemon_sleep(&self) -> u32 {
        self.daemon_sleep_s.load(Ordering::Relaxed)
    }

    /// Sets `time_base` (seconds, at least 1).
    pub fn set_daemon_sleep(&self, s: u32) {
        self.daemon_sleep_s.store(s.max(1), Ordering::Relaxed);
    }

    /// md's `events_cleared`: events up to which writes reached every member.
    pub fn events_cleared(&self) -> u64 {
        self.events_cleared.load(Ordering::Acquire)
    }

    /// md's `can_clear`: no `events_cleared` move is waiting to be written.
    pub fn can_clear(&self) -> bool {
        !self.need_sync.load(Ordering::Acquire)
    }

    /// Writes to `can_clear` (md's): `false` holds clearing off until the next daemon pass
    /// writes `events_cleared`; `true` lets it go on.
    pub fn set_can_clear(&self, can: bool) {
        self.need_sync.store(!can, Ordering::Release);
    }

    /// Chunks whose bit is set (or being set): what `mdadm -X` counts as dirty.
    pub fn dirty_chunks(&self) -> u64 {
        self.counts
            .iter()
            .filter(|w| w.load(Ordering::Relaxed) & STATE != CLEAR)
            .count() as u64
    }

    /// Sectors of the sync space per chunk.
    pub fn chunk_sectors(&self) -> u64 {
        1u64 << self.chunk_shift
    }

    /// The first chunk of the sync range `[start, start + len)` and the words of its chunks.
    fn words(&self, start: u64, len: u64) -> Option<(usize, &[AtomicU32])> {
        if len == 0 {
            return None;
        }
        let first = usize::try_from(start >> self.chunk_shift).ok()?;
        let last = usize::try_from(start.saturating_add(len - 1) >> self.chunk_shift).ok()?;
        let end = last.saturating_add(1).min(self.counts.len());
        Some((first, self.counts.get(first..end)?))
    }

    /// md's `md_bitmap_startwrite` and `md_bitmap_unplug`: counts a write to the sync range
    /// `[start, start + len)` and returns once the bits of all its chunks are on disk. Task
    /// context (a worker); sleeps only where a bit must be set.
    pub fn start_write(&self, array: &Array, start: u64, len: u64) {
        if !self.try_start_write(start, len) {
            if let Some((first, words)) = self.words(start, len) {
                self.start_write_slow(array, first, words);
            }
        }
    }

    /// The lock-free part of [`Bitmap::start_write`]: counts the write and returns `true` when
    /// every chunk's bit is already on disk; returns `false`, having counted nothing, when
    /// some bit must be set first. Any context.
    pub fn try_start_write(&self, start: u64, len: u64) -> bool {
        let Some((_, words)) = self.words(start, len) else {
            return true;
        };
        let mut slow = false;
        for (i, w) in words.iter().enumerate() {
            let mut cur = w.load(Ordering::Acquire);
            loop {
                let st = cur & STATE;
                if st == CLEAR || st == SETTING {
                    slow = true;
                    break;
                }
                let new = ((cur & !STATE) | FRESH) + 1;
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
            if slow {
                // Undo the chunks counted so far; the slow path counts them all again.
                for d in words.iter().take(i) {
                    d.fetch_sub(1, Ordering::AcqRel);
                }
                break;
            }
        }
        !slow
    }

    fn start_write_slow(&self, array: &Array, first: usize, words: &[AtomicU32]) {
        let mut d = self.disk.lock();
        let mut set_any = false;
        for (i, w) in words.iter().enumerate() {
            let mut cur = w.load(Ordering::Acquire);
            loop {
                // Under the mutex no chunk is SETTING but this caller's.
                let newst = match cur & STATE {
                    CLEAR => SETTING,
                    SETTING => SETTING,
                    _ => FRESH,
                };
                let new = ((cur & !STATE) | newst) + 1;
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
            if cur & STATE == CLEAR {
                d.set_bit((first + i) as u64, true);
                set_any = true;
            }
        }
        self.allclean.store(false, Ordering::Release);
        if set_any {
            self.write_dirty(array, &mut d, false);
        }
        for w in words {
            let mut cur = w.load(Ordering::Acquire);
            while cur & STATE == SETTING {
                let new = (cur & !STATE) | FRESH;
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
    }

    /// md's `md_bitmap_endwrite`: a write counted by [`Bitmap::start_write`] ended; any
    /// context. A write that failed, or ended while the array was degraded, leaves its chunks
    /// `NEEDED`; one that reached every member moves `events_cleared` to `events`.
    pub fn end_write(&self, start: u64, len: u64, ok: bool, degraded: bool, events: u64) {
        let Some((_, words)) = self.words(start, len) else {
            return;
        };
        let needed = if ok && !degraded { 0 } else { NEEDED };
        for w in words {
            let mut cur = w.load(Ordering::Acquire);
            loop {
                if cur & INFLIGHT == 0 {
                    break;
                }
                let new = (cur - 1) | needed;
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
        if needed == 0 && self.events_cleared.fetch_max(events, Ordering::AcqRel) < events {
            self.need_sync.store(true, Ordering::Release);
        }
    }

    /// md's `md_bitmap_start_sync`: whether a sync of `[start, start + len)` must copy it.
    /// Where not `degraded` (the sync leaves every member in sync), `NEEDED` chunks become
    /// `RESYNC`, to be cleared by [`Bitmap::end_sync`].
    pub fn start_sync(&self, start: u64, len: u64, degraded: bool) -> bool {
        let Some((_, words)) = self.words(start, len) else {
            return false;
        };
        let mut rv = false;
        for w in words {
            let mut cur = w.load(Ordering::Acquire);
            loop {
                if cur & RESYNC != 0 {
                    rv = true;
                } else if cur & NEEDED != 0 {
                    rv = true;
                    if !degraded {
                        let new = (cur & !NEEDED) | RESYNC;
                        if let Err(now) =
                            w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
                        {
                            cur = now;
                            continue;
                        }
                    }
                } else if cur & INFLIGHT != 0 {
                    // A write still counted may yet mark the chunk: it ends after its member
                    // bios, which is all the barrier waits for.
                    rv = true;
                }
                break;
            }
        }
        rv
    }

    /// md's `md_bitmap_end_sync` for every chunk of `[start, start + len)`: a sync finished
    /// them (their bits are cleared by the daemon), or was `aborted` (`NEEDED` again).
    pub fn end_sync(&self, start: u64, len: u64, aborted: bool) {
        let Some((_, words)) = self.words(start, len) else {
            return;
        };
        for w in words {
            let mut cur = w.load(Ordering::Acquire);
            while cur & RESYNC != 0 {
                let mut new = cur & !RESYNC;
                if aborted {
                    new |= NEEDED;
                }
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
        self.allclean.store(false, Ordering::Release);
    }

    /// Whether any chunk of `[start, start + len)` is `NEEDED` or being synced.
    pub fn needed(&self, start: u64, len: u64) -> bool {
        self.words(start, len).is_some_and(|(_, words)| {
            words
                .iter()
                .any(|w| w.load(Ordering::Acquire) & (NEEDED | RESYNC) != 0)
        })
    }

    /// md's `bitmap_daemon_work`, when `daemon_sleep` has passed since the last pass (or
    /// `force`): the superblock with a moved `events_cleared` first, then idle chunks age, and
    /// those idle for a whole pass are cleared. Metadata thread (or `remove`).
    pub fn daemon(&self, array: &Array, force: bool) {
        let now = kthread::now_ns();
        let sleep = u64::from(self.daemon_sleep()) * 1_000_000_000;
        if !force && now.saturating_sub(self.last_pass_ns.load(Ordering::Relaxed)) < sleep {
            return;
        }
        self.last_pass_ns.store(now, Ordering::Relaxed);
        if !force && self.allclean.load(Ordering::Acquire) && self.can_clear() {
            return;
        }
        let mut d = self.disk.lock();
        if self.need_sync.swap(false, Ordering::AcqRel) {
            d.sb.events_cleared = self.events_cleared.load(Ordering::Acquire);
            if let Some(dt) = d.dirty.get_mut(0) {
                *dt = true;
            }
            // Before any bit it allows to clear.
            self.write_dirty(array, &mut d, true);
        }
        let mut allclean = true;
        for (c, w) in self.counts.iter().enumerate() {
            let mut cur = w.load(Ordering::Acquire);
            loop {
                if cur & (INFLIGHT | NEEDED | RESYNC) != 0 {
                    allclean = false;
                    break;
                }
                let new = match cur & STATE {
                    FRESH => AGED,
                    AGED => CLEAR,
                    _ => break,
                };
                match w.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        if new == CLEAR {
                            d.set_bit(c as u64, false);
                        } else {
                            allclean = false;
                        }
                        break;
                    }
                    Err(now) => cur = now,
                }
            }
        }
        self.allclean.store(allclean, Ordering::Release);
        self.write_dirty(array, &mut d, true);
    }

    /// Writes the bitmap superblock with the array's `events` (md's `md_bitmap_update_sb`,
    /// from `md_update_sb`, before the superblocks); `all` writes every page (a new array, a
    /// device joining).
    pub fn update_sb(&self, array: &Array, events: u64, all: bool) {
        let mut d = self.disk.lock();
        d.sb.events = events;
        // Rolled back to a clean event count below it (md's "rocking back").
        let cleared = self.events_cleared.load(Ordering::Acquire);
        if events < cleared {
            self.events_cleared.store(events, Ordering::Release);
        }
        d.sb.events_cleared = self.events_cleared.load(Ordering::Acquire);
        d.sb.daemon_sleep = self.daemon_sleep();
        for (i, dt) in d.dirty.iter_mut().enumerate() {
            if all || i == 0 {
                *dt = true;
            }
        }
        self.write_dirty(array, &mut d, false);
    }

    /// Writes the dirty pages to every device in a slot (in sync or being rebuilt) and every
    /// replacement, md's `write_sb_page` targets. A device whose write fails fails, as md's
    /// `super_written` fails it.
    fn write_dirty(&self, array: &Array, d: &mut Disk, preflush: bool) {
        if !d.dirty.iter().any(|x| *x) {
            return;
        }
        let sb = d.sb;
        if let Some(p0) = d.pages.get_mut(0) {
            if sb.encode(p0.bytes_mut()).is_err() {
                return;
            }
        }
        let live = array.in_sync() | array.sync().recovering();
        let replacing = array.sync().replacing();
        for (s, m) in array.members().iter().enumerate() {
            let targets = [
                (m.dev.get().filter(|_| live & (1 << s) != 0), false),
                (
                    m.replacement.get().filter(|_| replacing & (1 << s) != 0),
                    true,
                ),
            ];
            for (dev, repl) in targets {
                let Some(dev) = dev else { continue };
                let base = self.version.sb_offset(dev.sectors()) as i64 + self.offset;
                let ff = !repl && array.meta_failfast(&dev, s);
                let mut failed = false;
                for (p, (pg, dt)) in d.pages.iter().zip(d.dirty.iter()).enumerate() {
                    if !*dt {
                        continue;
                    }
                    let from = p * PAGE_BYTES;
                    let len = (d.bytes - from).min(PAGE_BYTES);
                    let at = base + (from / 512) as i64;
                    if at < 0 || dev.write_intent(at as u64, pg, len, preflush, ff).is_err() {
                        failed = true;
                        break;
                    }
                }
                if failed {
                    pr_err!("{}: bitmap write failed on {}\n", array.name(), dev.name());
                    drop(dev);
                    if repl {
                        array.sync().drop_replacing(s);
                    } else {
                        let _ = array.fail_member(s);
                    }
                }
            }
        }
        for dt in d.dirty.iter_mut() {
            *dt = false;
        }
    }
}
