// A floor for a screen whose per-range step runs in Spark's JVM (issue 39, item 5).
//
// benchmarks/cluster_floor.py compiles this file at run time with the Janino compiler
// that pyspark already ships (no JDK needed), puts the classes in a jar the executors
// fetch (SparkContext.addJar), and calls walk() on rows shuffled to score ranges and
// sorted by score within each range (walkTwice(): the same, then a second walk over the
// arrays of the first, kept by Spark, standing for the located pass). It is a
// skeleton, not the method: per row it reads
// the four columns into arrays, keeps the population's running weight and weighted
// response, finds the population's rows between the midpoint after the group's previous
// score and the row's own score (galloping back from the row), and adds the row's term
// and a variance term to its group's running sum, with the largest and smallest value.
// Left out, so that it stays below any real port: merged ties, the exact sigma and its
// error bounds, the places of the extremes, the checks, the finite-sample step and the
// located stretches' own search.
//
// Janino compiles a subset of Java: no lambdas and no generic type arguments on the
// anonymous class, hence the raw types and the casts.

import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.storage.StorageLevel;

public final class RangeWalkFloor {
  private RangeWalkFloor() {}

  /** One partition's rows as arrays (group, score, weight, response). */
  public static final class Columns implements java.io.Serializable {
    int n;
    int[] g;
    double[] s;
    double[] w;
    double[] r;
  }

  /** The sum over partitions of each group's range of its running sum plus its variance
   *  sum: rows are (group int, score, weight, response double), sorted within partitions. */
  public static double walk(Dataset sorted, final int groups) {
    JavaRDD rows = sorted.queryExecution().toRdd().toJavaRDD();
    List parts = rows.mapPartitions(new FlatMapFunction() {
      public Iterator call(Object arg) throws Exception {
        Columns c = read((Iterator) arg);
        return Collections.singletonList(Double.valueOf(walkColumns(c, groups))).iterator();
      }
    }).collect();
    return sum(parts);
  }

  /** walk() twice, the partitions' arrays kept in Spark's block manager (MEMORY_ONLY, not
   *  serialized) between the two jobs: the second walk reads no shuffle and sorts nothing,
   *  as a located pass over a step's own arrays would. */
  public static double walkTwice(Dataset sorted, final int groups) {
    JavaRDD rows = sorted.queryExecution().toRdd().toJavaRDD();
    JavaRDD held = rows.mapPartitions(new FlatMapFunction() {
      public Iterator call(Object arg) throws Exception {
        return Collections.singletonList(read((Iterator) arg)).iterator();
      }
    }).persist(StorageLevel.MEMORY_ONLY());
    Function walked = new Function() {
      public Object call(Object c) throws Exception {
        return Double.valueOf(walkColumns((Columns) c, groups));
      }
    };
    double total = sum(held.map(walked).collect());
    total += sum(held.map(walked).collect());
    held.unpersist(false);
    return total;
  }

  private static double sum(List parts) {
    double total = 0.0;
    for (int q = 0; q < parts.size(); q++) {
      total += ((Double) parts.get(q)).doubleValue();
    }
    return total;
  }

  private static Columns read(Iterator it) {
    int cap = 1 << 16;
    int n = 0;
    int[] g = new int[cap];
    double[] s = new double[cap];
    double[] w = new double[cap];
    double[] r = new double[cap];
    while (it.hasNext()) {
      InternalRow row = (InternalRow) it.next();
      if (n == cap) {
        cap *= 2;
        g = Arrays.copyOf(g, cap);
        s = Arrays.copyOf(s, cap);
        w = Arrays.copyOf(w, cap);
        r = Arrays.copyOf(r, cap);
      }
      g[n] = row.getInt(0);
      s[n] = row.getDouble(1);
      w[n] = row.getDouble(2);
      r[n] = row.getDouble(3);
      n++;
    }
    Columns c = new Columns();
    c.n = n;
    c.g = g;
    c.s = s;
    c.w = w;
    c.r = r;
    return c;
  }

  private static double walkColumns(Columns c, int groups) {
    int n = c.n;
    int[] g = c.g;
    double[] s = c.s;
    double[] w = c.w;
    double[] r = c.r;
    double[] cw = new double[n + 1];
    double[] cr = new double[n + 1];
    for (int i = 0; i < n; i++) {
      cw[i + 1] = cw[i] + w[i];
      cr[i + 1] = cr[i] + w[i] * r[i];
    }
    int[] at = new int[groups];
    double[] last = new double[groups];
    double[] sums = new double[groups];
    double[] hi = new double[groups];
    double[] lo = new double[groups];
    double[] v = new double[groups];
    Arrays.fill(last, Double.NaN);
    for (int i = 0; i < n; i++) {
      int k = g[i];
      int b = i + 1;
      while (b < n && s[b] == s[i]) {
        b++;
      }
      int a = 0;
      if (!Double.isNaN(last[k])) {
        a = firstAtLeast(s, at[k], i, 0.5 * (last[k] + s[i]));
      }
      double mean = (cr[b] - cr[a]) / (cw[b] - cw[a]);
      sums[k] += w[i] * (r[i] - mean);
      v[k] += w[i] * w[i] * mean * (1.0 - mean);
      hi[k] = Math.max(hi[k], sums[k]);
      lo[k] = Math.min(lo[k], sums[k]);
      last[k] = s[i];
      at[k] = i;
    }
    double total = 0.0;
    for (int k = 0; k < groups; k++) {
      total += hi[k] - lo[k] + v[k];
    }
    return total;
  }

  /** The first place in [from, to] whose score is at least x, galloping back from to. */
  private static int firstAtLeast(double[] s, int from, int to, double x) {
    int high = to;
    int step = 1;
    int low = to - 1;
    while (low > from && s[low] >= x) {
      high = low;
      step <<= 1;
      low = Math.max(from, to - step);
    }
    low = Math.max(low, from);
    while (low < high) {
      int middle = (low + high) >>> 1;
      if (s[middle] < x) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }
}
