import NIOCore

/// Splits the byte stream into request lines (without the newline); a line longer than `maximumLength` is an error
/// (the connection answers it and closes), so no client makes the server hold more than that.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    struct LineTooLong: Error {}

    let maximumLength: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: 0x0A) else {
            if buffer.readableBytes > maximumLength { throw LineTooLong() }
            return .needMoreData
        }
        let length = newline - view.startIndex
        guard length <= maximumLength else { throw LineTooLong() }
        var line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A half line at the end of the connection is dropped, as mpd does.
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
