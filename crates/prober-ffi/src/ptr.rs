//! Where the pointers that C passes in become Rust references: the one module of this crate
//! that dereferences them, so that the exports read as safe code.
//!
//! The invariant, stated once: every export is an `unsafe extern "C" fn` whose `# Safety`
//! section is its caller's promise about each pointer argument, for the duration of the call:
//! NULL, or valid for what the export does with it —
//! - a handle: a live object of that type, made by this library
//!   ([`BoxedHandle::to_boxed_mut_ptr`]) and not freed; one that the export changes (a spec
//!   being set) is used by no other thread during the call ([`ExclusiveHandle`]);
//! - a string: NUL-terminated;
//! - `ptr`, `len`: `len` readable elements (or, for an array the export fills, writable ones);
//! - an out-parameter: aligned and writable.
//!
//! The functions here take pointers only from those arguments, check the one case the promise
//! leaves open, NULL, and rely on the promise for the rest; that is why they are safe
//! functions. A pointer that did not come from an export's argument must never reach them. The
//! references they return have a lifetime the caller picks: an export holds them only until it
//! returns (views handed to C, `prober_str`, have their own documented lifetimes).
//!
//! This is rustls-ffi's discipline (its `Castable` trait with `try_ref_from_ptr!`,
//! `try_mut_from_ptr!`, `to_boxed_mut_ptr`, `try_slice!`):
//! <https://github.com/rustls/rustls-ffi/blob/main/librustls/src/ffi.rs>.

use std::ffi::{CStr, c_char};
use std::mem::MaybeUninit;

use crate::set_error;
use crate::status::*;

/// An opaque type that C holds as a pointer to a `Box<Self>` this library made: `prober_spec`,
/// `prober_outcome`, `prober_engine`. Gives the conversions between that pointer and the
/// object (see the module's invariant).
pub(crate) trait BoxedHandle: Sized {
    /// What `prober_last_error` says when a required one is NULL, e.g. `"spec is NULL"`.
    const NULL_ERROR: &'static str;

    /// Moves `self` to the heap and gives C the pointer it owns from now on (until the type's
    /// `_free` export passes it to [`BoxedHandle::free_boxed_ptr`]).
    fn to_boxed_mut_ptr(self) -> *mut Self {
        Box::into_raw(Box::new(self))
    }

    /// Borrows a handle argument; `None` for NULL, recording nothing (for accessors whose
    /// answer for NULL is a neutral value).
    fn ref_from_ptr<'a>(ptr: *const Self) -> Option<&'a Self> {
        // Shared references to a handle may coexist: the types mutated through one
        // (`prober_spec`) are borrowed mutably only under the no-other-thread promise, and
        // `prober_engine` keeps its mutable state in a cell guarded by its in-use flag.
        // SAFETY: the module's invariant: `ptr` is an export's handle argument, NULL (mapped
        // to None here) or a live `Self` from `to_boxed_mut_ptr`, valid during the call.
        unsafe { ptr.as_ref() }
    }

    /// Borrows a required handle argument.
    ///
    /// # Errors
    /// `PROBER_E_NULL` (with [`BoxedHandle::NULL_ERROR`] for `prober_last_error`) for NULL.
    fn try_ref_from_ptr<'a>(ptr: *const Self) -> Result<&'a Self, prober_status> {
        Self::ref_from_ptr(ptr).ok_or_else(|| set_error(PROBER_E_NULL, Self::NULL_ERROR))
    }

    /// Frees a handle given to a `_free` export; NULL is ignored.
    fn free_boxed_ptr(ptr: *mut Self) {
        if !ptr.is_null() {
            // SAFETY: the module's invariant and the `_free` exports' contract: non-NULL, so
            // made by `to_boxed_mut_ptr` (`Box::into_raw`) and not freed before; the caller
            // uses it no more, so nothing else refers to it.
            drop(unsafe { Box::from_raw(ptr) });
        }
    }
}

/// A handle that exports change in place (`prober_spec`'s setters). Their contract adds that no
/// other thread uses it during the call, so the `&mut` is the only reference.
pub(crate) trait ExclusiveHandle: BoxedHandle {
    /// Borrows a required handle argument mutably.
    ///
    /// # Errors
    /// `PROBER_E_NULL` (with [`BoxedHandle::NULL_ERROR`] for `prober_last_error`) for NULL.
    fn try_mut_from_ptr<'a>(ptr: *mut Self) -> Result<&'a mut Self, prober_status> {
        // SAFETY: the module's invariant: NULL (refused here) or a live `Self` from
        // `to_boxed_mut_ptr`, used by no other thread during the call and not borrowed
        // elsewhere in this call (each export borrows its handle once).
        unsafe { ptr.as_mut() }.ok_or_else(|| set_error(PROBER_E_NULL, Self::NULL_ERROR))
    }
}

/// A checked out-parameter: non-NULL, written at most once (on success: an export creates its
/// `Out` before its work and writes it at the end).
#[derive(Debug)]
pub(crate) struct Out<'a, T>(&'a mut MaybeUninit<T>);

impl<T> Out<'_, T> {
    /// The out-parameter `ptr`, or `None` for NULL, recording nothing.
    pub(crate) fn from_ptr(ptr: *mut T) -> Option<Self> {
        // SAFETY: the module's invariant: `ptr` is an export's out-parameter, NULL (mapped to
        // None) or aligned and writable for a `T`. As `MaybeUninit<T>` its old contents, which
        // may be uninitialised, are never read nor dropped.
        unsafe { ptr.cast::<MaybeUninit<T>>().as_mut() }.map(Out)
    }

    /// The required out-parameter `ptr`, named `what` in errors.
    ///
    /// # Errors
    /// `PROBER_E_NULL` ("`what` is NULL") for NULL.
    pub(crate) fn try_from_ptr(ptr: *mut T, what: &str) -> Result<Self, prober_status> {
        Self::from_ptr(ptr).ok_or_else(|| set_error(PROBER_E_NULL, format!("{what} is NULL")))
    }

    /// Stores the result for the caller.
    pub(crate) fn write(self, value: T) {
        self.0.write(value);
    }
}

/// Reads a required NUL-terminated UTF-8 string argument, named `what` in errors.
///
/// # Errors
/// `PROBER_E_NULL` for NULL, `PROBER_E_INVALID_UTF8` for text that is not UTF-8.
pub(crate) fn try_str_from_ptr<'a>(
    ptr: *const c_char,
    what: &str,
) -> Result<&'a str, prober_status> {
    if ptr.is_null() {
        return Err(set_error(PROBER_E_NULL, format!("{what} is NULL")));
    }
    // SAFETY: the module's invariant: a string argument, non-NULL here, so NUL-terminated and
    // valid (and unchanged) during the call.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str().map_err(|_| set_error(PROBER_E_INVALID_UTF8, format!("{what} is not valid UTF-8")))
}

/// Borrows the `len` elements at `ptr` (a `ptr`, `len` argument pair named `what` in errors).
/// NULL is accepted when `len` is 0 (an empty slice).
///
/// # Errors
/// `PROBER_E_NULL` for NULL with a non-zero `len`.
pub(crate) fn try_slice_from_ptr<'a, T>(
    ptr: *const T,
    len: usize,
    what: &str,
) -> Result<&'a [T], prober_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(set_error(PROBER_E_NULL, format!("{what} is NULL")));
    }
    // SAFETY: the module's invariant: non-NULL here, so `len` readable, initialised, aligned
    // elements, not written by anyone during the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The `len` elements at `ptr` that an export fills (an array argument); `None` for NULL,
/// recording nothing.
pub(crate) fn out_slice_from_ptr<'a, T>(
    ptr: *mut T,
    len: usize,
) -> Option<&'a mut [MaybeUninit<T>]> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the module's invariant: non-NULL here, so aligned and writable for `len`
    // elements, used by nothing else during the call. As `MaybeUninit<T>` their old contents
    // are never read nor dropped.
    Some(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) })
}

#[cfg(test)]
mod tests {
    use prober_core::{ProbeSpec, Schedule};

    use super::*;
    use crate::prober_last_error;
    use crate::spec::prober_spec;

    fn last_error() -> String {
        let s = prober_last_error();
        // SAFETY: the view is valid until the next call on this thread; copied at once.
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn null_arguments_are_refused_with_their_names() {
        assert_eq!(try_str_from_ptr(std::ptr::null(), "host").unwrap_err(), PROBER_E_NULL);
        assert_eq!(last_error(), "host is NULL");
        let slice = try_slice_from_ptr::<u8>(std::ptr::null(), 3, "data");
        assert_eq!(slice.unwrap_err(), PROBER_E_NULL);
        assert_eq!(last_error(), "data is NULL");
        assert_eq!(
            Out::<u64>::try_from_ptr(std::ptr::null_mut(), "out").unwrap_err(),
            PROBER_E_NULL
        );
        assert_eq!(last_error(), "out is NULL");
        assert_eq!(prober_spec::try_mut_from_ptr(std::ptr::null_mut()).unwrap_err(), PROBER_E_NULL);
        assert_eq!(last_error(), "spec is NULL");
        // The forms whose NULL is a neutral answer record nothing.
        assert!(Out::<u64>::from_ptr(std::ptr::null_mut()).is_none());
        assert!(out_slice_from_ptr::<u64>(std::ptr::null_mut(), 4).is_none());
        assert!(prober_spec::ref_from_ptr(std::ptr::null()).is_none());
        assert_eq!(last_error(), "spec is NULL");
        // NULL with no elements is the empty array.
        assert_eq!(try_slice_from_ptr::<u8>(std::ptr::null(), 0, "data"), Ok(&[][..]));
    }

    #[test]
    fn valid_arguments_are_read_and_written_in_place() {
        assert_eq!(try_str_from_ptr(c"example.com".as_ptr(), "host"), Ok("example.com"));
        let bad = [0xffu8, 0];
        let r = try_str_from_ptr(bad.as_ptr().cast(), "url");
        assert_eq!(r.unwrap_err(), PROBER_E_INVALID_UTF8);
        assert_eq!(last_error(), "url is not valid UTF-8");

        let data = [1u8, 0, 2];
        assert_eq!(try_slice_from_ptr(data.as_ptr(), 3, "data"), Ok(&data[..]));

        let mut value = 0u64;
        Out::try_from_ptr(&raw mut value, "out").unwrap().write(42);
        assert_eq!(value, 42);
        let mut values = [0u64; 3];
        let slots = out_slice_from_ptr(values.as_mut_ptr(), 2).unwrap();
        assert_eq!(slots.len(), 2);
        for (i, slot) in slots.iter_mut().enumerate() {
            slot.write(i as u64 + 7);
        }
        assert_eq!(values, [7, 8, 0]);
    }

    #[test]
    fn a_handle_goes_to_c_and_back() {
        let spec = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
        let p = prober_spec { spec, schedule: Schedule::default() }.to_boxed_mut_ptr();
        prober_spec::try_mut_from_ptr(p).unwrap().schedule.success_threshold = 5;
        assert_eq!(prober_spec::try_ref_from_ptr(p).unwrap().schedule.success_threshold, 5);
        // Freed once; a NULL handle is ignored.
        prober_spec::free_boxed_ptr(p);
        prober_spec::free_boxed_ptr(std::ptr::null_mut());
    }
}
