import CWebAssets
import Foundation

/// The dashboard's script, style sheet and icon, served as files (`/static/...`): the
/// Content-Security-Policy allows scripts and styles from the dashboard's own origin only, so
/// there is no inline script or style anywhere. They are files of their own
/// (`Sources/CWebAssets/dashboard.js`, `dashboard.css`, `favicon.svg`), compiled into the binary
/// (`CWebAssets`): the package installs the binary alone, and no bundle is looked for at run time.
///
/// The script: live updates that leave the operator alone: an EventSource on `/api/events` (the
/// runtime's observations); each event is listed, and the page is fetched again (at most every
/// 150 ms) and `<main>` morphed into it: only nodes that differ change, matched by `id` where
/// they have one, so a field being typed in keeps its value and focus, an open `<details>` stays
/// open, and `data-keep` parts (the events list) are left as they are. The server's HTML stays
/// the only rendering. Action results go to `#messages`, outside `<main>`, and stay until
/// dismissed. While the stream is down a banner says so and the countdowns stop. Action forms
/// are sent with `fetch` and the token kept in `sessionStorage` (asked once; never a cookie).
package enum Assets {
    package static let script = String(decoding: bytes(refreshd_dashboard_js), as: UTF8.self)
    package static let style = String(decoding: bytes(refreshd_dashboard_css), as: UTF8.self)
    package static let favicon = String(decoding: bytes(refreshd_favicon_svg), as: UTF8.self)
    /// The OpenAPI document's own part (`openapi.json`: paths, words, annotations).
    static let openAPI = Data(bytes(refreshd_openapi_json))

    /// One of `CWebAssets`' files (constant data of the binary, never freed) as bytes.
    private static func bytes(_ asset: refreshd_asset) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: asset.bytes, count: asset.count)
    }
}
