import com.fasterxml.jackson.annotation.JacksonAnnotationsInside;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * The string formats typed clients parse (Guid, DateTime with and without a zone, DateOnly),
 * and the non-optional marker. Each value is built from a JSON string only: with scalar
 * coercion off, Jackson refuses a JSON number for them, as for any String.
 */
final class Values {
  private Values() {}

  /**
   * A member the client model marks non-optional, as a C# `required` member: missing fails
   * (a required creator property), and so does null (Decoder checks every decoded record: Jackson
   * 2.14 does not apply {@code @JsonSetter(nulls = FAIL)} to a record's creator properties).
   */
  @Target({ElementType.PARAMETER, ElementType.FIELD, ElementType.METHOD, ElementType.RECORD_COMPONENT, ElementType.ANNOTATION_TYPE})
  @Retention(RetentionPolicy.RUNTIME)
  @JacksonAnnotationsInside
  @JsonProperty(required = true)
  @interface Required {}

  /**
   * A member declared non-nullable whose absence takes its default, as a C# non-nullable member
   * without `required`: a JSON null there fails (Decoder checks the answer's nulls against these).
   * Numbers and booleans use Java's primitives for that instead (FAIL_ON_NULL_FOR_PRIMITIVES).
   */
  @Target({ElementType.PARAMETER, ElementType.FIELD, ElementType.METHOD, ElementType.RECORD_COMPONENT})
  @Retention(RetentionPolicy.RUNTIME)
  @interface NonNull {}

  private static final Pattern GUID = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  private static final Pattern UTC = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,7})?Z");
  private static final Pattern ZONELESS = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,7})?");
  private static final Pattern DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
  private static final Pattern DATE_PREFIX = Pattern.compile("\\d{4}-\\d{2}-\\d{2}.*");

  static void checked(String value, Pattern pattern, String what) {
    if (!pattern.matcher(value).matches()) throw new IllegalArgumentException("\"" + value + "\" is not a " + what);
  }

  /** A date or date-time in the pattern whose date is a real calendar day, as DateTime.Parse requires. */
  static void calendar(String value, Pattern pattern, String what) {
    checked(value, pattern, what);
    try {
      LocalDate.parse(value.substring(0, 10));
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("\"" + value + "\" is not a real calendar date");
    }
  }

  record Guid(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    Guid {
      checked(value, GUID, "GUID");
    }
  }

  /** `modified`: UTC, ending in Z. */
  record UtcDateTime(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    UtcDateTime {
      calendar(value, UTC, "UTC date-time ending in Z");
    }
  }

  /** Policy dates, dates of birth, clientSince: no zone. */
  record ZonelessDateTime(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    ZonelessDateTime {
      calendar(value, ZONELESS, "date-time without a zone (yyyy-mm-ddThh:mm:ss)");
    }
  }

  /** A member a version does not have: present at all, null included, is a failure. */
  @JsonDeserialize(using = AbsentDeserializer.class)
  record Absent() {}

  static final class AbsentDeserializer extends JsonDeserializer<Absent> {
    private static final String PRESENT = "present, but this version has no such member";

    @Override
    public Absent deserialize(JsonParser parser, DeserializationContext context) throws IOException {
      return context.reportInputMismatch(Absent.class, PRESENT);
    }

    @Override
    public Absent getNullValue(DeserializationContext context) throws JsonMappingException {
      return context.reportInputMismatch(Absent.class, PRESENT);
    }

    @Override
    public Object getAbsentValue(DeserializationContext context) {
      return null;
    }
  }

  /** A username: always 3 characters. */
  record Username(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    Username {
      if (value.length() != 3) throw new IllegalArgumentException("\"" + value + "\" is not 3 characters");
    }
  }

  /** Invoice dates. */
  record DateOnly(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    DateOnly {
      calendar(value, DATE, "date (yyyy-mm-dd)");
    }
  }

  /** A date the contract gives no format for (a claim's loss date): a date or a date-time. */
  record AnyDate(String value) {
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    AnyDate {
      calendar(value, DATE_PREFIX, "date or date-time");
    }
  }
}
