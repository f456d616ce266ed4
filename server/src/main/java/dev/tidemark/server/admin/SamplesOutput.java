package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.SeriesSamples;
import java.io.IOException;

/**
 * {@code read}'s output, fed the {@link SeriesSamples} messages as they arrive (the consecutive
 * messages of one series, which the server splits after 10000 samples, make one series); holds no
 * more than the current series' labels. {@link TextOutput.SampleTable} and {@link
 * JsonOutput.JsonLines} implement it.
 */
interface SamplesOutput {
  /** Writes the message's samples, after the series' start if the labels are new. */
  void add(SeriesSamples s) throws IOException;

  /** Ends the last series: the answer is complete. */
  void end() throws IOException;

  /** Passes what is buffered on, also after an error (an unfinished series stays unfinished). */
  void flush() throws IOException;
}
