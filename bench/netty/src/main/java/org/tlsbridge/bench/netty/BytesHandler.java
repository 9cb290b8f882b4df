package org.tlsbridge.bench.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ConcurrentHashMap;

/**
 * GET /N answers N bytes of 'a' with Content-Type application/octet-stream,
 * the body bench/server's servlet sends; keep-alive unless the request says
 * otherwise. Each body is built once per size, in a direct buffer as Netty's
 * default allocator hands out, and shared by every response (a duplicate with
 * its own indices; nothing writes to it), so every engine gets the same bytes
 * the same way and the TLS engine is what differs.
 */
final class BytesHandler extends ChannelInboundHandlerAdapter {
    private static final int MAX = 64 << 20;
    private static final ConcurrentHashMap<Integer, ByteBuf> BODIES = new ConcurrentHashMap<>();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest) {
                answer(ctx, (HttpRequest) msg);
            }
        } finally {
            // the request's content parts (empty for a GET) are not needed
            ReferenceCountUtil.release(msg);
        }
    }

    private static void answer(ChannelHandlerContext ctx, HttpRequest req) {
        boolean keep = HttpUtil.isKeepAlive(req);
        int n = size(req.uri());
        FullHttpResponse resp = n < 0
                ? new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND, Unpooled.EMPTY_BUFFER)
                : new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body(n).retainedDuplicate());
        resp.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, Math.max(n, 0));
        if (!keep) {
            resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ChannelFuture f = ctx.writeAndFlush(resp);
        if (!keep) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static ByteBuf body(int n) {
        return BODIES.computeIfAbsent(n, k -> {
            ByteBuf b = Unpooled.directBuffer(k, k);
            for (int i = 0; i < k; i++) {
                b.writeByte('a');
            }
            return Unpooled.unreleasableBuffer(b);
        });
    }

    /** "/N" with N decimal digits, at most MAX; -1 otherwise. */
    static int size(String uri) {
        if (uri.length() < 2 || uri.length() > 10 || uri.charAt(0) != '/') {
            return -1;
        }
        int n = 0;
        for (int i = 1; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n <= MAX ? n : -1;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent && ((SslHandshakeCompletionEvent) evt).isSuccess()) {
            NegotiatedSample.handshake(ctx.pipeline().get(SslHandler.class).engine());
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // a client that resets mid-response (wrk at the end of its window)
        ctx.close();
    }
}
