// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// Where $NOTIFY_SOCKET points: a file-system socket ("/run/systemd/notify") or a
/// Linux abstract-namespace name ("@/org/freedesktop/systemd1/notify/..."), whose
/// leading '@' stands for the NUL byte that starts an abstract `sun_path`.
public struct NotifySocketAddress: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case path
        case abstract
    }

    public let kind: Kind
    /// The text as given in $NOTIFY_SOCKET.
    public let text: String
    /// The bytes of `sun_path` (for an abstract name: NUL, then the name; no terminator).
    let pathBytes: [UInt8]

    /// sun_path's size on Linux.
    static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    public init(_ text: String) throws(SystemdNotifyError) {
        let bytes = Array(text.utf8)
        if bytes.first == UInt8(ascii: "/") {
            // A path needs its NUL terminator inside sun_path.
            guard bytes.count < Self.maxPathBytes else {
                throw SystemdNotifyError(.invalidAddress, "NOTIFY_SOCKET \"\(text)\" is longer than \(Self.maxPathBytes - 1) bytes")
            }
            kind = .path
            pathBytes = bytes
        } else if bytes.first == UInt8(ascii: "@"), bytes.count > 1 {
            guard bytes.count <= Self.maxPathBytes else {
                throw SystemdNotifyError(.invalidAddress, "NOTIFY_SOCKET \"\(text)\" is longer than \(Self.maxPathBytes) bytes")
            }
            kind = .abstract
            pathBytes = [0] + bytes.dropFirst()
        } else {
            // systemd 253+ also knows "vsock:CID:PORT" (for VMs); a camera never runs in one.
            throw SystemdNotifyError(.invalidAddress, "NOTIFY_SOCKET \"\(text)\" is neither an absolute path nor "
                                        + "an '@' abstract socket name; start shutterd from systemd or unset it")
        }
        self.text = text
    }

    public var description: String { text }

    /// Calls `body` with the sockaddr and its length (abstract names: no trailing NUL counted).
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let length = pathOffset + pathBytes.count + (kind == .path ? 1 : 0)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}
