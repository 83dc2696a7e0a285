// SPDX-License-Identifier: BSD-2-Clause
import CGPIODShim
import Dispatch
import ShutterCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The shutter button on a GPIO line: input with pull-up, both edges, the kernel's
/// CLOCK_MONOTONIC edge timestamps. The request fd is watched by a DispatchSource on a
/// serial queue, which hands raw edges (after active-low) to the consumer's sink (the
/// service's inbox, bounded there: one hop to the loop);
/// the core's stability filter debounces them (never the kernel: see the shim's header).
/// A trigger input's line (`triggers.inputs`) is read the same way: one request per line.
public final class GPIOButton: ButtonInput {
    public struct Configuration: Sendable, Equatable {
        /// The line's bias, as the shim takes it (SHUTTER_GPIO_BIAS_*).
        public enum Bias: Int32, Sendable, Equatable {
            case asIs = 0, pullUp = 1, pullDown = 2, disabled = 3
        }

        public var line: GPIOLineSpec
        /// True for the usual wiring: button to ground, pull-up, pressed = low.
        public var activeLow: Bool
        public var bias: Bias
        public var pullUp: Bool { bias == .pullUp }
        public var consumer: String
        /// What the line is, in messages ("The button", "The trigger input \"pir\"").
        public var label = "The button"

        public init(line: GPIOLineSpec, activeLow: Bool = true, pullUp: Bool = true,
                    consumer: String = "shutter-button") {
            self.init(line: line, activeLow: activeLow, bias: pullUp ? .pullUp : .asIs, consumer: consumer)
        }

        public init(line: GPIOLineSpec, activeLow: Bool, bias: Bias, consumer: String, label: String = "The button") {
            self.label = label
            self.line = line
            self.activeLow = activeLow
            self.bias = bias
            self.consumer = consumer
        }
    }

    private struct State {
        var input: OpaquePointer?
        var source: SourceBox?
        var sink: ButtonSink?
        /// The newest edge delivered (a `.caughtUp` is never dated before it).
        var lastTime = MonotonicTime(nanoseconds: 0)
        /// The line's level was looked at for the first consumer.
        var levelDelivered = false
    }

    public let configuration: Configuration
    public let location: GPIOLineLocation
    private let queue = DispatchQueue(label: "shutter.gpio.button")
    private let line: LineState
    private let fd: Int32
    private let log: @Sendable (String) -> Void

    /// Requests the line now, so a missing chip or a busy line fails at start-up.
    public init(_ configuration: Configuration,
                log: @escaping @Sendable (String) -> Void = GPIOButton.logToStderr) throws {
        self.configuration = configuration
        self.log = log
        let location = try GPIOChips.locate(configuration.line)
        self.location = location
        var handle: OpaquePointer?
        let rc = shutter_gpio_input_open(location.chipPath, location.offset, configuration.consumer,
                                         configuration.bias.rawValue, &handle)
        guard rc == 0, let handle else {
            throw GPIOError.requestFailed(rc, what: configuration.label, line: location)
        }
        fd = shutter_gpio_input_fd(handle)
        line = LineState(State(input: handle))
        startWatching(fd: fd)
    }

    deinit { close() }

    /// Edges from now on, to `sink` on the reading queue. A second call replaces the
    /// first sink: one consumer at a time. The first consumer of a button already held
    /// (a press from power-off) gets a press dated now first: the kernel reports edges,
    /// not a level that was there before the line was requested.
    public func deliver(to sink: @escaping ButtonSink) {
        line.state.withLock { s in s.sink = s.input == nil ? nil : sink }
        // On the reading queue, in order with the edges read there.
        queue.async { [self] in
            guard line.state.withLock({ s in
                defer { s.levelDelivered = true }
                return !s.levelDelivered && s.lastTime == MonotonicTime(nanoseconds: 0)
            }), (try? isPressed()) == true else { return }
            let now = SystemClock().now()
            // "the button is held ..." / "the trigger input "pir" is held ...": the label, lower-cased.
            let what = configuration.label.prefix(1).lowercased() + configuration.label.dropFirst()
            log("\(what) is held as the service starts: a press from power-off")
            line.state.withLock { s in
                s.lastTime = now
                _ = s.sink?(.edge(ButtonEdge(pressed: true, time: now)))
            }
        }
    }

    /// On the reading queue: the time now, then every edge already queued in the
    /// kernel, then `.caughtUp` (dated no earlier than the last of them).
    public func catchUp() {
        queue.async { [self] in
            let now = SystemClock().now()
            while line.state.withLock({ $0.input != nil }) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 0) > 0, p.revents & Int16(POLLIN) != 0, readEdges() > 0 else { break }
            }
            line.state.withLock { s in
                _ = s.sink?(.caughtUp(max(now, s.lastTime)))
            }
        }
    }

    /// True while the button is held now (read from the line, after active-low).
    public func isPressed() throws -> Bool {
        let rc: Int32 = line.state.withLock { s in
            guard let input = s.input else { return -EBADF }
            return shutter_gpio_input_value(input)
        }
        guard rc >= 0 else { throw GPIOError.requestFailed(rc, what: configuration.label, line: location) }
        return (rc != 0) != configuration.activeLow
    }

    /// Nothing unread in the kernel (polled, not read) and no read under way, in that
    /// order: an edge read after the poll is counted in `reading` until it is in the sink.
    public var allEdgesDelivered: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) == 0 else { return false }  // readable, closed or failed: ask
        return line.reading.load(ordering: .sequentiallyConsistent) == 0
    }

    /// Edges the consumer was too slow for (its sink did not take them).
    public var droppedEdges: Int { line.dropped.load(ordering: .relaxed) }

    /// Releases the line; no edge is delivered after it. Safe to call twice.
    public func close() {
        let source = line.state.withLock { s in
            let r = s.source
            s.source = nil
            s.sink = nil
            return r
        }
        if let source {
            source.source.cancel() // the cancel handler releases the line, on the queue
        } else {
            line.release()
        }
    }

    private func startWatching(fd: Int32) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.readEdges() }
        // The line is released only once the source is cancelled (libdispatch must not
        // watch a closed fd), possibly after this object is gone: capture the state, not self.
        source.setCancelHandler { [line] in line.release() }
        source.resume()
        let box = SourceBox(source)
        line.state.withLock { $0.source = box }
    }

    /// The requested line and the stream, shared by the button, its dispatch source's
    /// handlers and close(); outlives the button until the source is cancelled.
    private final class LineState: Sendable {
        let state: Mutex<State>
        /// Edges dropped, readable without the line's lock (the loop's `status` never waits
        /// for a device thread).
        let dropped = Atomic<Int>(0)
        /// Reads under way (taken from the kernel, not yet in the sink): `allEdgesDelivered`.
        let reading = Atomic<Int>(0)
        init(_ state: sending State) { self.state = Mutex(state) }

        func release() {
            let taken: TakenGPIOHandle? = state.withLock { s in
                let i = s.input.map(TakenGPIOHandle.init)
                s.input = nil
                return i
            }
            if let taken { shutter_gpio_input_close(taken.pointer) }
        }
    }

    // Runs on `queue`. The lock is held across the read so close() cannot free the
    // handle under it; the read never blocks (the shim's fd is non-blocking: an edge the
    // source saw may have been read by catchUp already). Returns the number of edges read.
    @discardableResult
    private func readEdges() -> Int {
        line.reading.add(1, ordering: .sequentiallyConsistent)
        defer { line.reading.subtract(1, ordering: .sequentiallyConsistent) }
        var raw = [shutter_gpio_edge](repeating: shutter_gpio_edge(), count: 16)
        let activeLow = configuration.activeLow
        let n: Int32 = line.state.withLock { s in
            guard let input = s.input else { return 0 }
            return raw.withUnsafeMutableBufferPointer {
                shutter_gpio_input_read(input, $0.baseAddress, Int32($0.count))
            }
        }
        if n < 0 {
            log("<3>shutter.gpio: reading \(configuration.consumer) edges on \(location.chipPath) line \(location.offset) failed "
                + "(\(String(cString: strerror(-n)))); \(configuration.label.prefix(1).lowercased() + configuration.label.dropFirst()) stops working until the service restarts.")
            close()
            return 0
        }
        let edges = raw.prefix(Int(n)).map {
            ButtonEdge(pressed: ($0.rising != 0) != activeLow,
                       time: MonotonicTime(nanoseconds: Int64(bitPattern: $0.timestamp_ns)))
        }
        line.state.withLock { s in
            // No consumer yet: stale edges are not replayed.
            guard let sink = s.sink else { return }
            for edge in edges {
                if !sink(.edge(edge)) { line.dropped.add(1, ordering: .relaxed) }
                s.lastTime = max(s.lastTime, edge.time)
            }
        }
        return Int(n)
    }

    // Unchecked: a dispatch source (not marked Sendable), kept under `state`'s Mutex; its cancel() is thread-safe.
    private final class SourceBox: @unchecked Sendable {
        let source: any DispatchSourceRead
        init(_ source: any DispatchSourceRead) { self.source = source }
    }

    public static let logToStderr: @Sendable (String) -> Void = { line in
        var text = line + "\n"
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
