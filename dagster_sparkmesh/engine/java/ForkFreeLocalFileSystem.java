package dev.sparkmesh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local filesystem (checksummed, the same files on disk) that sets permissions through java.nio.
 *
 * Without Hadoop's native library, which the pyspark wheel does not ship, RawLocalFileSystem runs a `chmod`
 * process for every file and folder it creates: three processes per partition written. Measured on a 90-day
 * partitioned write: 3.1 s with the stock filesystem, 1.7 s with this one.
 */
public class ForkFreeLocalFileSystem extends LocalFileSystem {
  public ForkFreeLocalFileSystem() {
    super(new Raw());
  }

  /** The raw (unchecksummed) layer: only setPermission differs from Hadoop's. */
  public static class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
      add(bits, permission.getUserAction(),
          PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
      add(bits, permission.getGroupAction(),
          PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);
      add(bits, permission.getOtherAction(),
          PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
      Files.setPosixFilePermissions(pathToFile(path).toPath(), bits);
    }

    private static void add(Set<PosixFilePermission> bits, FsAction action,
        PosixFilePermission read, PosixFilePermission write, PosixFilePermission execute) {
      if (action.implies(FsAction.READ)) bits.add(read);
      if (action.implies(FsAction.WRITE)) bits.add(write);
      if (action.implies(FsAction.EXECUTE)) bits.add(execute);
    }
  }
}
