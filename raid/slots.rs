//! A vector whose elements keep their place: removing one leaves a hole that the next added
//! element fills. The arrays of the module, the spares and member directories of an array,
//! `/proc/rraidstat`'s list and the sync jobs' unit claims are each one.

use kernel::prelude::*;

/// Elements in stable places, holes refilled first.
pub struct Slots<T> {
    v: KVec<Option<T>>,
}

impl<T> Slots<T> {
    /// No elements.
    pub const fn new() -> Self {
        Self { v: KVec::new() }
    }

    /// Puts `x` in the first hole, or at the end.
    pub fn put(&mut self, x: T) -> Result {
        self.try_put(x).map_err(|_| ENOMEM)
    }

    /// [`Slots::put`], handing `x` back when there is no memory for its place, so that the
    /// caller can undo what it did for it.
    pub fn try_put(&mut self, x: T) -> Result<(), T> {
        if self.v.iter().all(Option::is_some) && self.v.push(None, GFP_KERNEL).is_err() {
            return Err(x);
        }
        match self.v.iter_mut().find(|e| e.is_none()) {
            Some(hole) => {
                *hole = Some(x);
                Ok(())
            }
            None => Err(x),
        }
    }

    /// Takes out the first element `f` accepts, leaving a hole.
    pub fn take(&mut self, f: impl Fn(&T) -> bool) -> Option<T> {
        self.v
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(&f))
            .and_then(Option::take)
    }

    /// The first element `f` accepts, for a change in place.
    pub fn find_mut(&mut self, f: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.v.iter_mut().flatten().find(|e| f(e))
    }

    /// The elements, in place order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.v.iter().flatten()
    }
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self::new()
    }
}
