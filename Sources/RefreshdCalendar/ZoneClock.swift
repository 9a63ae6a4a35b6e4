import Foundation

/// Converts between wall-clock readings and instants in one time zone the way glibc's
/// `mktime` and `localtime_r` do, because systemd's calendar search is built on them and its
/// results across daylight-saving changes follow from their details:
/// - `mktime` starts from the UTC offset of its previous call and refines it by probing, so an
///   ambiguous reading (fall-back overlap) resolves to whichever offset the walk last used.
/// - A reading inside a spring-forward gap resolves to the probe whose DST flag differs from
///   the requested one (with no request, the DST one): usually the reading pushed forward.
/// - A concrete `isDST` request that disagrees with the reading is honoured by borrowing the
///   offset of the nearest instant with the requested flag (probing in 601200 s steps).
struct ZoneClock {
    let zone: TimeZone
    /// The offset that mapped the last reading to its instant; the next call's first guess.
    private(set) var lastOffset: Int

    init(zone: TimeZone, startingAt instant: Int) {
        self.zone = zone
        self.lastOffset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    func offset(at instant: Int) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    func isDST(at instant: Int) -> Bool {
        zone.isDaylightSavingTime(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    /// The reading at an instant with its DST flag, like `localtime_r`.
    func civil(at instant: Int) -> CivilTime {
        var time = CivilTime(naiveSeconds: instant + offset(at: instant))
        time.isDST = isDST(at: instant)
        return time
    }

    /// The instant a reading denotes, like `mktime`; fields may be out of range.
    mutating func instant(of time: CivilTime) -> Int {
        let local = time.naiveSeconds
        var probe = local - lastOffset
        var previous: Int?
        var found: Int?
        for _ in 0..<8 {
            let probeOffset = offset(at: probe)
            if probe + probeOffset == local {
                found = probe
                break
            }
            let next = local - probeOffset
            if let previous, next == previous {
                // Oscillating around a gap: prefer the probe whose DST flag differs from the
                // requested one, or with no request the DST one.
                let preferDST = !(time.isDST ?? false)
                found = isDST(at: probe) == preferDST ? probe : previous
                lastOffset = local - found!
                return found!
            }
            previous = probe
            probe = next
        }
        var result = found ?? probe
        if let wanted = time.isDST, isDST(at: result) != wanted {
            result = borrowingOffset(local: local, near: result, wantDST: wanted)
        }
        lastOffset = local - result
        return result
    }

    /// glibc's fallback for a reading whose DST flag disagrees with the request: use the offset
    /// of the nearest instant (backwards first) that has the requested flag, else shift an hour.
    private func borrowingOffset(local: Int, near t: Int, wantDST: Bool) -> Int {
        let stride = 601_200
        let bound = 457_243_200 / 2 + stride
        var delta = stride
        while delta < bound {
            for direction in [-1, 1] {
                let other = t + delta * direction
                if isDST(at: other) == wantDST {
                    return local - offset(at: other)
                }
            }
            delta += stride
        }
        return t + 3600 * ((wantDST ? 0 : 1) - (isDST(at: t) ? 0 : 1))
    }

    /// Normalizes a reading like `mktime` does in place: the reading of the instant it denotes,
    /// with its actual DST flag.
    mutating func normalize(_ time: CivilTime) -> CivilTime {
        civil(at: instant(of: time))
    }
}
