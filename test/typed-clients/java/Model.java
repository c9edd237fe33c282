import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;

/**
 * The read model of versions 4.0 and 3.0, agencies, offices and users, typed as the contract's
 * section A types it. {@code @Required} marks what the client model marks non-optional; every
 * other member may be absent or null, but when present must have its type.
 */
final class Model {
  private Model() {}

  enum ClientStatus { Active, DeadFile, Prospect, Lead }

  enum BusinessType { None, Corporation, IndividualOrSoleProprietor, SubchapterS, LLC, Partnership, JointVenture, NonProfit, FamilyTrust }

  enum ContactType {
    None, WorkPhone, WorkEmail, CellPhone, HomePhone, HomeEmail, OtherPhone, OtherEmail, MessagePhone, Pager, Fax, SocialMedia, ClientWebsite, OtherWebsite
  }

  enum MainContactType { None, First, Second, Other }

  enum ApplicationType { Undefined, Agricultural, Commercial, EmployeeBenefits, Health, Life, Other, Personal, SuretyBond, Platform }

  /** 4.0 agencies listing entry (3.0 and 1 list bare Int ids). */
  record Agency(@Values.Required Integer agencyId, @Values.Required List<String> scopes) {}

  /** An office of every version; only 4.0 carries archived (checked by {@link OfficeV4}). */
  record Office(
      @Values.Required Integer officeId,
      @Values.Required String officeDescription,
      String subAgencyName,
      @Values.Required Boolean primaryOffice,
      String addressLine1,
      String addressLine2,
      String city,
      String state,
      String zipcode) {}

  record OfficeV4(
      @Values.Required Integer officeId,
      @Values.Required String officeDescription,
      String subAgencyName,
      @Values.Required Boolean primaryOffice,
      String addressLine1,
      String addressLine2,
      String city,
      String state,
      String zipcode,
      @Values.Required Boolean archived) {}

  record User(
      @Values.Required Integer userId,
      @Values.Required Values.Username username,
      String firstName,
      String lastName,
      String email,
      Integer homeOffice) {}

  /** A client of versions 4.0 and 3.0: groups not requested are absent. */
  record Client(
      @Values.Required Integer clientNumber,
      Details details,
      List<Person> people,
      List<Contact> contacts,
      List<Claim> claims,
      List<Policy> policies,
      List<Invoice> invoices) {}

  record Address(String address1, String address2, String city, String state, String zip, String county, String countryCode) {}

  record Details(
      @Values.Required Values.Guid id,
      @Values.Required Values.UtcDateTime modified,
      String clientType,
      @Values.Required ClientStatus status,
      @Values.Required Boolean isPersonal,
      @Values.Required Boolean isCommercial,
      String companyName,
      String dbaName,
      BusinessType businessType,
      String feinNum,
      String website,
      String agencyNum,
      @Values.Required Integer officeId,
      Values.ZonelessDateTime clientSince,
      Boolean allowCrossSell,
      String source,
      String producer,
      String csr,
      List<Values.Guid> mainContacts,
      Address mailingAddress,
      Address physicalAddress) {}

  record Person(
      @Values.Required Values.Guid id,
      @Values.Required Values.UtcDateTime modified,
      Integer legacyId,
      String title,
      String firstName,
      String middleName,
      String lastName,
      @Values.Required MainContactType mainContactType,
      String relationship,
      Values.ZonelessDateTime dateOfBirth,
      String gender,
      String occupation,
      String maritalStatus,
      String driverLicenseNumber) {}

  record Contact(
      @Values.Required Values.Guid id,
      @Values.Required Values.UtcDateTime modified,
      Integer legacyId,
      @Values.Required ContactType type,
      @Values.Required String data,
      Values.Guid personId,
      String description,
      // a production C# sync: int Priority, bool AllowMassEmail, bool IsBillingContact (absent: 0, false; null fails)
      boolean isBillingContact,
      boolean allowMassEmail,
      int priority) {}

  record Claim(
      @Values.Required Values.Guid id,
      @Values.Required Values.UtcDateTime modified,
      Integer legacyId,
      String claimNumber,
      String claimStatus,
      Values.AnyDate lossDate,
      BigDecimal lossAmount,
      String policyNumber) {}

  record LineOfBusiness(@Values.Required String code, String name) {}

  /** Coverage premium is a string on the wire ("412.00"). */
  record Coverage(String code, String description, String limits, String deductibles, String premium) {}

  /** A driver with its person and role: production v4 callers find the named insured by them. */
  record Driver(
      @Values.NonNull Values.Guid personId,
      @Values.NonNull String firstName,
      @Values.NonNull String lastName,
      @Values.NonNull String relationship,
      @Values.NonNull PersonalInfo personalInfo,
      @Values.NonNull String licenseNumber,
      @Values.NonNull String licenseState) {}

  record PersonalInfo(@Values.NonNull String status) {}

  record AdditionalInterest(
      @Values.Required Values.Guid id,
      @Values.Required Boolean isPayor,
      @Values.Required Values.Guid parentId,
      @Values.Required String parentType,
      @Values.Required Integer rank) {}

  record Policy(
      @Values.Required Values.Guid id,
      @Values.Required Values.UtcDateTime modified,
      Integer legacyId,
      @Values.Required String policyNumber,
      Integer policyIndex,
      String carrier,
      String writingCarrier,
      String naic,
      String status,
      String subStatus,
      @Values.Required Values.ZonelessDateTime statusDate,
      @Values.Required String type,
      @Values.Required String title,
      @Values.Required ApplicationType applicationType,
      String policyState,
      Values.ZonelessDateTime effectiveDate,
      Values.ZonelessDateTime expirationDate,
      Values.ZonelessDateTime inceptionDate,
      Values.ZonelessDateTime soldDate,
      String term,
      BigDecimal premium,
      BigDecimal quotedPremium,
      @Values.Required String paymentPlan,
      @Values.Required String premiumMode,
      @Values.Required Integer numberOfTerms,
      @Values.Required String program,
      @Values.Required Integer raterCode,
      String billingType,
      Integer officeId,
      String agent1,
      String agent2,
      String agent3,
      List<LineOfBusiness> loBs,
      List<Coverage> coverages,
      List<Driver> drivers,
      List<ObjectNode> autos,
      List<AdditionalInterest> additionalInterests,
      List<ObjectNode> locations,
      @Values.Required List<ObjectNode> boats,
      @Values.Required List<ObjectNode> boatOperators,
      @Values.Required List<JsonNode> locationReferences) {}

  record Invoice(
      @Values.Required Values.Guid id,
      Values.Guid policyId,
      String invoiceNumber,
      Values.DateOnly date,
      Values.DateOnly dueDate,
      @Values.Required BigDecimal total,
      @Values.Required BigDecimal balance) {}
}
