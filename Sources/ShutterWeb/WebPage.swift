import Foundation

/// The page: plain HTML, CSS and JavaScript, shipped inside shutterd (no build
/// step, nothing to install beside the binary). `WebPage+Files.swift` holds the texts.
enum WebPage {
    enum Asset { case login, app, style, loginScript, appScript }

    static func response(_ asset: Asset) -> WebResponse {
        let (type, text): (String, String)
        switch asset {
        case .login: (type, text) = ("text/html; charset=utf-8", loginHTML)
        case .app: (type, text) = ("text/html; charset=utf-8", appHTML)
        case .style: (type, text) = ("text/css; charset=utf-8", styleCSS)
        case .loginScript: (type, text) = ("text/javascript; charset=utf-8", loginJS)
        case .appScript: (type, text) = ("text/javascript; charset=utf-8", appJS)
        }
        return WebResponse(status: 200, contentType: type, body: .bytes(Data(text.utf8)),
                           headers: [("Cache-Control", "no-cache")])
    }
}
