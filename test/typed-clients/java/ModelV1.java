import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;

/**
 * The version 1 client: `id` for the client number, allowCrossSell and clientType at the top
 * level, integer ids on sub-records, and policies of their own shape (linesOfBusiness[] with
 * drivers and vehicles, state, currentPremium, no modified), as the one raw live version 1
 * answer in the public record shows.
 */
final class ModelV1 {
  private ModelV1() {}

  record Client(
      @Values.Required Integer id,
      @Values.Required Boolean allowCrossSell,
      @Values.Required String clientType,
      @Values.Required Details details,
      @Values.Required List<Person> people,
      @Values.Required List<Contact> contacts,
      @Values.Required List<Claim> claims,
      @Values.Required List<Policy> policies) {}

  record Details(
      Values.UtcDateTime modified,
      @Values.Required Model.ClientStatus status,
      @Values.Required Boolean isPersonal,
      @Values.Required Boolean isCommercial,
      String companyName,
      String dbaName,
      Model.BusinessType businessType,
      String feinNum,
      String website,
      String agencyNum,
      @Values.Required Integer officeId,
      Values.ZonelessDateTime clientSince,
      String source,
      String producer,
      String csr,
      List<Integer> mainContacts,
      Model.Address mailingAddress,
      Model.Address physicalAddress) {}

  record Person(
      @Values.Required Integer id,
      Values.UtcDateTime modified,
      String title,
      String firstName,
      String middleName,
      String lastName,
      @Values.Required Model.MainContactType mainContactType,
      String relationship,
      Values.ZonelessDateTime dateOfBirth,
      String gender,
      String occupation,
      String maritalStatus,
      String driverLicenseNumber) {}

  record Contact(
      @Values.Required Integer id,
      Values.UtcDateTime modified,
      @Values.Required Model.ContactType type,
      @Values.Required String data,
      Integer personId,
      String description,
      boolean isBillingContact,
      boolean allowMassEmail,
      int priority) {}

  record Claim(
      @Values.Required Integer id,
      Values.UtcDateTime modified,
      String claimNumber,
      String claimStatus,
      Values.AnyDate lossDate,
      BigDecimal lossAmount,
      String policyNumber) {}

  record LineOfBusiness(
      Integer id,
      @Values.Required String code,
      @Values.Required String status,
      @Values.Required List<ObjectNode> coverages,
      @Values.Required List<Driver> drivers,
      @Values.Required List<Vehicle> vehicles,
      @Values.Required List<ObjectNode> locations) {}

  /** The sample's drivers carry every key: the person's name, relationship and operatorStatus. */
  record Driver(
      @Values.Required Integer id,
      @Values.Required String firstName,
      @Values.Required String lastName,
      @Values.Required String relationship,
      @Values.Required String operatorStatus,
      String licenseNumber,
      String licenseState) {}

  /** A vehicle with its coverages, premium a JSON number in version 1. */
  record Vehicle(@Values.Required Integer id, String year, String make, @Values.Required List<Coverage> coverages) {}

  record Coverage(
      @Values.Required Integer id,
      @Values.Required String code,
      String description,
      Integer displayOrder,
      String limits,
      String deductibles,
      @Values.Required BigDecimal premium,
      BigDecimal percent) {}

  record Policy(
      @Values.Required Integer id,
      @Values.Required String policyNumber,
      String carrier,
      String naic,
      String status,
      String subStatus,
      Values.ZonelessDateTime statusDate,
      String type,
      String typeName,
      String title,
      Model.ApplicationType applicationType,
      @Values.Required String state,
      Values.ZonelessDateTime effectiveDate,
      Values.ZonelessDateTime expirationDate,
      Values.ZonelessDateTime inceptionDate,
      Values.ZonelessDateTime soldDate,
      String term,
      @Values.Required BigDecimal currentPremium,
      BigDecimal quotedPremium,
      String paymentPlan,
      String program,
      Integer officeId,
      Integer displayOrder,
      Boolean isArchived,
      Integer rater,
      List<ObjectNode> coverages,
      @Values.Required List<LineOfBusiness> linesOfBusiness,
      List<ObjectNode> locations,
      // version 1 policies carry no modified
      Values.Absent modified) {}
}
