import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.type.TypeFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A typed client of the Agency Integration API written in Java 17 with Jackson: it decodes every
 * answer of a JSON-lines file ({label, operation, version, body} per line) into the records of
 * Model and ModelV1, prints the answers decoded per operation and version, and exits 1 listing
 * the failures. Jackson is set up the way a strict client is: no scalar coercion (a JSON number
 * is not a String, a string is not a number, a fraction is not an Integer), non-optional members
 * required and non-null, non-nullable members (primitives, {@code @NonNull}) never null, unknown
 * properties allowed.
 */
public final class Decoder {
  private Decoder() {}

  record Failure(String path, String message) {}

  static final ObjectMapper MAPPER = strictMapper();

  static ObjectMapper strictMapper() {
    ObjectMapper mapper = JsonMapper.builder()
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        // absent, a primitive (C#'s int Priority) takes its default; a JSON null there fails (nullsWhereNotNullable)
        .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        // a typed list holds no null item (List<int> in C# refuses one)
        .defaultSetterInfo(JsonSetter.Value.forContentNulls(Nulls.FAIL))
        .build();
    // Jackson turns numbers and booleans into String unless told not to (databind#3013).
    mapper.coercionConfigFor(LogicalType.Textual)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    return mapper;
  }

  static JavaType listOf(Class<?> item) {
    return TypeFactory.defaultInstance().constructCollectionType(List.class, item);
  }

  /** The type an answer decodes into, by operation and version. */
  static JavaType typeOf(String operation, String version) {
    boolean v1 = version.equals("1");
    return switch (operation + " " + version) {
      case "agencies 4.0" -> listOf(Model.Agency.class);
      case "agencies 3.0", "agencies 1", "changedClients 4.0", "changedClients 3.0", "changedClients 1" -> listOf(Integer.class);
      case "offices 4.0" -> listOf(Model.OfficeV4.class);
      case "offices 3.0", "offices 1" -> listOf(Model.Office.class);
      case "users 4.0" -> listOf(Model.User.class);
      case "getClient 4.0", "getClient 3.0", "getClient 1" ->
          TypeFactory.defaultInstance().constructType(v1 ? ModelV1.Client.class : Model.Client.class);
      case "batchClients 4.0", "batchClients 3.0", "searchClients 4.0", "searchClients 3.0", "batchClients 1" ->
          listOf(v1 ? ModelV1.Client.class : Model.Client.class);
      default -> null;
    };
  }

  /**
   * Failing answers whose every failure is found (each failing member decoded again on its own);
   * after them, a failing answer reports the first failure Jackson met, so that a broken shape
   * does not make the run decode everything several times.
   */
  static final int FULLY_DIAGNOSED_ANSWERS = 300;

  /** Decodes `node` as `type`; on failure, finds every failing member below it when `diagnose`. */
  static void decode(JsonNode node, JavaType type, String path, List<Failure> out, boolean diagnose) {
    try {
      if (node.isNull()) throw new IllegalArgumentException("null where a value is expected");
      Object value = MAPPER.readerFor(type).readValue(MAPPER.treeAsTokens(node));
      requireNonNull(value, path, out);
      nullsWhereNotNullable(node, type, path, out);
    } catch (IOException | ReflectiveOperationException | RuntimeException e) {
      if (!diagnose) {
        out.add(new Failure(path + pathOf(e), messageOf(e)));
        return;
      }
      int before = out.size();
      Class<?> raw = type.getRawClass();
      if (raw.isRecord() && node.isObject()) {
        for (RecordComponent component : raw.getRecordComponents()) {
          JsonNode child = node.get(component.getName());
          boolean required = component.isAnnotationPresent(Values.Required.class);
          String at = path + "." + component.getName();
          if (child == null || child.isNull()) {
            if (required) out.add(new Failure(at, "required, but " + (child == null ? "missing" : "null")));
            else if (child != null && notNullable(component)) out.add(new Failure(at, NOT_NULLABLE));
          } else {
            decode(child, MAPPER.getTypeFactory().constructType(component.getGenericType()), at, out, true);
          }
        }
      } else if (type.isCollectionLikeType() && node.isArray()) {
        for (int i = 0; i < node.size(); i++) decode(node.get(i), type.getContentType(), path + "[" + i + "]", out, true);
      }
      if (out.size() == before) out.add(new Failure(path + pathOf(e), messageOf(e)));
    }
  }

  /** The non-optional members of every decoded record are not null. */
  static void requireNonNull(Object value, String path, List<Failure> out) throws ReflectiveOperationException {
    if (value instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) requireNonNull(list.get(i), path + "[" + i + "]", out);
    } else if (value instanceof Record record) {
      for (RecordComponent component : record.getClass().getRecordComponents()) {
        Object member = component.getAccessor().invoke(record);
        String at = path + "." + component.getName();
        if (member == null && component.isAnnotationPresent(Values.Required.class)) out.add(new Failure(at, "required, but null"));
        else requireNonNull(member, at, out);
      }
    }
  }

  static final String NOT_NULLABLE = "null, but the member is not nullable";

  /** A member a JSON null fails: a primitive (as C#'s int and bool) or one marked {@code @NonNull}. */
  static boolean notNullable(RecordComponent component) {
    return component.getType().isPrimitive() || component.isAnnotationPresent(Values.NonNull.class);
  }

  /** A JSON null where a member is not nullable (absent is allowed: it takes its default). */
  static void nullsWhereNotNullable(JsonNode node, JavaType type, String path, List<Failure> out) {
    Class<?> raw = type.getRawClass();
    if (raw.isRecord() && node.isObject()) {
      for (RecordComponent component : raw.getRecordComponents()) {
        JsonNode child = node.get(component.getName());
        if (child == null) continue;
        String at = path + "." + component.getName();
        if (child.isNull()) {
          if (notNullable(component)) out.add(new Failure(at, NOT_NULLABLE));
        } else {
          nullsWhereNotNullable(child, MAPPER.getTypeFactory().constructType(component.getGenericType()), at, out);
        }
      }
    } else if (type.isCollectionLikeType() && node.isArray()) {
      for (int i = 0; i < node.size(); i++) nullsWhereNotNullable(node.get(i), type.getContentType(), path + "[" + i + "]", out);
    }
  }

  static String pathOf(Throwable e) {
    if (!(e instanceof JsonMappingException m)) return "";
    StringBuilder path = new StringBuilder();
    for (JsonMappingException.Reference r : m.getPath()) {
      if (r.getFieldName() != null) path.append('.').append(r.getFieldName());
      else if (r.getIndex() >= 0) path.append('[').append(r.getIndex()).append(']');
    }
    return path.toString();
  }

  static String messageOf(Throwable e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) cause = cause.getCause();
    String message = cause instanceof JsonProcessingException j ? j.getOriginalMessage() : cause.getMessage();
    if (message == null) message = cause.getClass().getSimpleName();
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }

  /** Failures that differ only in indices and values. */
  static String kindOf(Failure f) {
    String message = f.message().replaceAll("\"[^\"]*\"", "\"…\"").replaceAll("-?\\b\\d[\\d.]*", "N");
    return f.path().replaceAll("\\[\\d+\\]", "[*]") + ": " + message;
  }

  public static void main(String[] args) throws IOException {
    // --every-failure lists every failure instead of the first 20
    int limit = 20;
    if (args.length == 2 && args[0].equals("--every-failure")) {
      limit = Integer.MAX_VALUE;
      args = new String[] {args[1]};
    }
    if (args.length != 1) {
      System.err.println("usage: java Decoder [--every-failure] ANSWERS.jsonl");
      System.exit(2);
    }
    Map<String, int[]> tallies = new TreeMap<>();
    Map<String, Integer> kinds = new TreeMap<>();
    Map<String, String> kindExample = new TreeMap<>();
    List<String> first = new ArrayList<>();
    int answers = 0;
    int failedAnswers = 0;
    try (BufferedReader lines = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        JsonNode answer = MAPPER.readTree(line);
        answers++;
        String operation = answer.path("operation").asText();
        String version = answer.path("version").asText();
        String key = operation + " " + version;
        String label = answer.path("label").asText();
        JavaType type = typeOf(operation, version);
        List<Failure> failures = new ArrayList<>();
        if (type == null) failures.add(new Failure("$", "no decoder for operation " + key));
        else decode(answer.path("body"), type, "$", failures, failedAnswers < FULLY_DIAGNOSED_ANSWERS);
        int[] tally = tallies.computeIfAbsent(key, k -> new int[2]);
        if (failures.isEmpty()) {
          tally[0]++;
          continue;
        }
        tally[1]++;
        failedAnswers++;
        for (Failure f : failures) {
          String kind = kindOf(f);
          kindExample.putIfAbsent(kind, label);
          kinds.merge(kind, 1, Integer::sum);
          if (first.size() < limit) first.add("  " + label + "  " + f.path() + ": " + f.message());
        }
      }
    }
    System.out.printf("java (Jackson %s): %d answers, %d decoded, %d failed%n",
        com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION, answers, answers - failedAnswers, failedAnswers);
    tallies.forEach((key, t) -> System.out.printf("  %-20s %6d decoded %6d failed%n", key, t[0], t[1]));
    if (failedAnswers == 0) return;
    System.out.printf("distinct failures (%d)%s:%n", kinds.size(),
        failedAnswers > FULLY_DIAGNOSED_ANSWERS ? "; past the first " + FULLY_DIAGNOSED_ANSWERS + " failing answers, only the first failure of each" : "");
    kinds.forEach((kind, n) -> System.out.printf("  %6d x %s  (first in %s)%n", n, kind, kindExample.get(kind)));
    System.out.println("first failures:");
    first.forEach(System.out::println);
    System.exit(1);
  }
}
