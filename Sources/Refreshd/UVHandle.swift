import CLibUV

/// Closes a libuv handle allocated with `UnsafeMutablePointer<T>.allocate` and frees its memory
/// once libuv is done with it (in the close callback, the only safe moment).
package func closeAndFree<T>(_ handle: UnsafeMutablePointer<T>) {
    uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)) { h in
        UnsafeMutableRawPointer(h)?.deallocate()
    }
}
