/** The warning both commands give for test/protos/streaming/ticker.proto, written out in full. */
export const TICKER_WARNING =
  'streaming/ticker.proto: 3 streaming rpcs left out of the generated grain and client ' +
  '(grain calls are unary; a call answers UnimplementedError): ' +
  'granary.test.streaming.Ticker.Watch (server streaming), ' +
  'granary.test.streaming.Ticker.Record (client streaming), ' +
  'granary.test.streaming.Ticker.Relay (bidi streaming)';
