//! Kernel threads, time and sleeping, for long-running background work (the sync thread).

use core::ptr::NonNull;
use kernel::{bindings, c_str, prelude::*, sync::Arc};

/// What a thread runs, kept by its [`Thread`] so that it outlives the thread.
struct Start<T> {
    data: Arc<T>,
    f: fn(&T),
}

/// A kernel thread running `f(&data)`.
///
/// Dropping the handle asks the thread to stop (see [`should_stop`]) and waits until it has
/// returned; a thread that already returned is only reaped.
///
/// # Invariants
///
/// `task` is a kthread created by `kthread_create_on_node` with `start` as its data, and this
/// value holds a reference to its `task_struct`. `start` is not freed before the thread has
/// been stopped.
pub struct Thread<T: Send + Sync + 'static> {
    task: NonNull<bindings::task_struct>,
    start: KBox<Start<T>>,
}

// SAFETY: The handle only wakes and stops the thread, which any task may do.
unsafe impl<T: Send + Sync + 'static> Send for Thread<T> {}
// SAFETY: `&Thread` only wakes the thread.
unsafe impl<T: Send + Sync + 'static> Sync for Thread<T> {}

/// The thread function.
///
/// # Safety
///
/// `data` is the `Start<T>` of a live [`Thread`], which outlives this call.
unsafe extern "C" fn thread_fn<T: Send + Sync + 'static>(data: *mut core::ffi::c_void) -> i32 {
    // SAFETY: By the function's requirements `data` points to a live `Start<T>`.
    let start = unsafe { &*data.cast::<Start<T>>() };
    (start.f)(&start.data);
    0
}

impl<T: Send + Sync + 'static> Thread<T> {
    /// Starts a thread named `name` that runs `f(&data)` and then exits.
    pub fn spawn(name: &CStr, data: Arc<T>, f: fn(&T)) -> Result<Self> {
        let start = KBox::new(Start { data, f }, GFP_KERNEL)?;
        let ptr = (&*start as *const Start<T>)
            .cast_mut()
            .cast::<core::ffi::c_void>();
        // SAFETY: `thread_fn::<T>` matches the thread function type; `ptr` stays valid until
        // the thread is stopped (type invariant); "%s" takes the NUL-terminated `name`.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(thread_fn::<T>),
                ptr,
                bindings::NUMA_NO_NODE,
                c_str!("%s").as_char_ptr(),
                name.as_char_ptr(),
            )
        };
        // SAFETY: `task` is the value just returned, a pointer or an encoded error.
        if unsafe { bindings::IS_ERR(task.cast()) } {
            // SAFETY: As above, it is an error pointer.
            let code = unsafe { bindings::PTR_ERR(task.cast()) };
            return Err(Error::from_errno(code as i32));
        }
        let task = NonNull::new(task).ok_or(ENOMEM)?;
        // SAFETY: `task` is the new thread, not yet woken: take the reference that `kthread_stop`
        // needs even after the thread has returned, then let it run.
        unsafe {
            bindings::get_task_struct(task.as_ptr());
            bindings::wake_up_process(task.as_ptr());
        }
        // INVARIANT: created above with `start` as data, reference taken.
        Ok(Self { task, start })
    }

    /// The data the thread runs on.
    pub fn data(&self) -> &Arc<T> {
        &self.start.data
    }
}

impl<T: Send + Sync + 'static> Drop for Thread<T> {
    fn drop(&mut self) {
        // SAFETY: We hold a reference to the kthread (type invariant), so `kthread_stop` is
        // valid even when the thread has already returned; it waits for the thread function to
        // return, after which `start` is no longer used, and drops our reference.
        unsafe { bindings::kthread_stop_put(self.task.as_ptr()) };
    }
}

/// Whether the current kthread has been asked to stop. Only meaningful on a [`Thread`].
pub fn should_stop() -> bool {
    // SAFETY: Reads a flag of the current task; false on a task that is not a kthread.
    unsafe { bindings::kthread_should_stop() }
}

/// Sleeps about `ms` milliseconds. Not interruptible: a signal pending for a sysfs writer
/// would end `msleep_interruptible` at once and turn a caller's wait loop into a spin, and
/// `kthread_stop` sends none; loops that must end early check [`should_stop`] between sleeps.
pub fn sleep_ms(ms: u32) {
    // SAFETY: Called in task context, where sleeping is allowed.
    unsafe { bindings::msleep(ms) };
}

/// Sets the calling task's nice value, clamped to -20..=19.
pub fn set_nice(nice: i8) {
    // SAFETY: `get_current` is the running task, live while it runs; `set_user_nice` takes the
    // task's runqueue lock itself and may be called on any task from task context.
    unsafe { bindings::set_user_nice(bindings::get_current(), nice.clamp(-20, 19).into()) };
}

/// Monotonic time in nanoseconds.
pub fn now_ns() -> u64 {
    // SAFETY: `ktime_get` may be called from any context.
    let t = unsafe { bindings::ktime_get() };
    u64::try_from(t).unwrap_or(0)
}
