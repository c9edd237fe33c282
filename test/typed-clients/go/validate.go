package main

// The non-optional fields and formats of each type, walked after encoding/json decoded an answer.

func (a *AgencyV4) check(c *checker, p string) {
	need(c, p+".agencyId", a.AgencyID)
	need(c, p+".scopes", a.Scopes)
}

func (o *Office) check(c *checker, p string, archived bool) {
	need(c, p+".officeId", o.OfficeID)
	need(c, p+".officeDescription", o.OfficeDescription)
	need(c, p+".primaryOffice", o.PrimaryOffice)
	if archived {
		need(c, p+".archived", o.Archived)
	}
}

func (u *User) check(c *checker, p string) {
	need(c, p+".userId", u.UserID)
	if need(c, p+".username", u.Username) && len(*u.Username) != 3 {
		c.fail(p+".username", "%q is not 3 characters", *u.Username)
	}
}

func (cl *Client) check(c *checker, p string) {
	need(c, p+".clientNumber", cl.ClientNumber)
	if d := cl.Details; d != nil {
		d.check(c, p+".details")
	}
	if cl.People != nil {
		for i := range *cl.People {
			(*cl.People)[i].check(c, at(p+".people", i))
		}
	}
	if cl.Contacts != nil {
		for i := range *cl.Contacts {
			(*cl.Contacts)[i].check(c, at(p+".contacts", i))
		}
	}
	if cl.Claims != nil {
		for i := range *cl.Claims {
			(*cl.Claims)[i].check(c, at(p+".claims", i))
		}
	}
	if cl.Policies != nil {
		for i := range *cl.Policies {
			(*cl.Policies)[i].check(c, at(p+".policies", i))
		}
	}
	if cl.Invoices != nil {
		for i := range *cl.Invoices {
			(*cl.Invoices)[i].check(c, at(p+".invoices", i))
		}
	}
}

func (d *Details) check(c *checker, p string) {
	c.text(p+".id", d.ID, true, "guid")
	c.text(p+".modified", d.Modified, true, "utc")
	c.oneOf(p+".status", d.Status, true, clientStatuses)
	need(c, p+".isPersonal", d.IsPersonal)
	need(c, p+".isCommercial", d.IsCommercial)
	c.oneOf(p+".businessType", d.BusinessType, false, businessTypes)
	need(c, p+".officeId", d.OfficeID)
	c.text(p+".clientSince", d.ClientSince, false, "local")
	if d.MainContacts != nil {
		for i := range *d.MainContacts {
			c.text(at(p+".mainContacts", i), &(*d.MainContacts)[i], true, "guid")
		}
	}
}

func (r *Person) check(c *checker, p string) {
	c.text(p+".id", r.ID, true, "guid")
	c.text(p+".modified", r.Modified, true, "utc")
	c.oneOf(p+".mainContactType", r.MainContactType, true, mainContactTypes)
	c.text(p+".dateOfBirth", r.DateOfBirth, false, "local")
}

func (r *Contact) check(c *checker, p string) {
	c.text(p+".id", r.ID, true, "guid")
	c.text(p+".modified", r.Modified, true, "utc")
	c.oneOf(p+".type", r.Type, true, contactTypes)
	need(c, p+".data", r.Data)
	c.text(p+".personId", r.PersonID, false, "guid")
}

func (r *Claim) check(c *checker, p string) {
	c.text(p+".id", r.ID, true, "guid")
	c.text(p+".modified", r.Modified, true, "utc")
	c.text(p+".lossDate", r.LossDate, false, "date-prefix")
}

func (r *Policy) check(c *checker, p string) {
	c.text(p+".id", r.ID, true, "guid")
	c.text(p+".modified", r.Modified, true, "utc")
	need(c, p+".policyNumber", r.PolicyNumber)
	// non-optional in the client model: every policy carries them
	need(c, p+".title", r.Title)
	need(c, p+".type", r.Type)
	c.oneOf(p+".applicationType", r.ApplicationType, true, applicationTypes)
	c.text(p+".statusDate", r.StatusDate, true, "local")
	need(c, p+".paymentPlan", r.PaymentPlan)
	need(c, p+".premiumMode", r.PremiumMode)
	need(c, p+".numberOfTerms", r.NumberOfTerms)
	need(c, p+".program", r.Program)
	need(c, p+".raterCode", r.RaterCode)
	need(c, p+".boats", r.Boats)
	need(c, p+".boatOperators", r.BoatOperators)
	need(c, p+".locationReferences", r.LocationReferences)
	// policy dates carry no zone
	c.text(p+".effectiveDate", r.EffectiveDate, false, "local")
	c.text(p+".expirationDate", r.ExpirationDate, false, "local")
	c.text(p+".inceptionDate", r.InceptionDate, false, "local")
	c.text(p+".soldDate", r.SoldDate, false, "local")
	if r.LoBs != nil {
		for i, lob := range *r.LoBs {
			need(c, at(p+".loBs", i)+".code", lob.Code)
		}
	}
	if r.Drivers != nil {
		for i, d := range *r.Drivers {
			c.text(at(p+".drivers", i)+".personId", d.PersonID, false, "guid")
		}
	}
	if r.AdditionalInterests != nil {
		for i, ai := range *r.AdditionalInterests {
			q := at(p+".additionalInterests", i)
			c.text(q+".id", ai.ID, true, "guid")
			need(c, q+".isPayor", ai.IsPayor)
			c.text(q+".parentId", ai.ParentID, true, "guid")
			need(c, q+".parentType", ai.ParentType)
			need(c, q+".rank", ai.Rank)
		}
	}
}

func (r *Invoice) check(c *checker, p string) {
	c.text(p+".id", r.ID, true, "guid")
	c.text(p+".policyId", r.PolicyID, false, "guid")
	c.text(p+".date", r.Date, false, "date")
	c.text(p+".dueDate", r.DueDate, false, "date")
	need(c, p+".total", r.Total)
	need(c, p+".balance", r.Balance)
}

func (cl *ClientV1) check(c *checker, p string) {
	need(c, p+".id", cl.ID)
	need(c, p+".allowCrossSell", cl.AllowCrossSell)
	need(c, p+".clientType", cl.ClientType)
	if need(c, p+".details", cl.Details) {
		d := cl.Details
		q := p + ".details"
		c.text(q+".modified", d.Modified, false, "utc")
		c.oneOf(q+".status", d.Status, true, clientStatuses)
		need(c, q+".isPersonal", d.IsPersonal)
		need(c, q+".isCommercial", d.IsCommercial)
		c.oneOf(q+".businessType", d.BusinessType, false, businessTypes)
		need(c, q+".officeId", d.OfficeID)
		c.text(q+".clientSince", d.ClientSince, false, "local")
	}
	if need(c, p+".people", cl.People) {
		for i, r := range *cl.People {
			q := at(p+".people", i)
			need(c, q+".id", r.ID)
			c.text(q+".modified", r.Modified, false, "utc")
			c.oneOf(q+".mainContactType", r.MainContactType, true, mainContactTypes)
			c.text(q+".dateOfBirth", r.DateOfBirth, false, "local")
		}
	}
	if need(c, p+".contacts", cl.Contacts) {
		for i, r := range *cl.Contacts {
			q := at(p+".contacts", i)
			need(c, q+".id", r.ID)
			c.text(q+".modified", r.Modified, false, "utc")
			c.oneOf(q+".type", r.Type, true, contactTypes)
			need(c, q+".data", r.Data)
		}
	}
	if need(c, p+".claims", cl.Claims) {
		for i, r := range *cl.Claims {
			q := at(p+".claims", i)
			need(c, q+".id", r.ID)
			c.text(q+".modified", r.Modified, false, "utc")
			c.text(q+".lossDate", r.LossDate, false, "date-prefix")
		}
	}
	if need(c, p+".policies", cl.Policies) {
		for i := range *cl.Policies {
			(*cl.Policies)[i].check(c, at(p+".policies", i))
		}
	}
}

func (r *PolicyV1) check(c *checker, p string) {
	need(c, p+".id", r.ID)
	need(c, p+".policyNumber", r.PolicyNumber)
	need(c, p+".state", r.State)
	need(c, p+".currentPremium", r.CurrentPremium)
	c.oneOf(p+".applicationType", r.ApplicationType, false, applicationTypes)
	c.text(p+".statusDate", r.StatusDate, false, "local")
	c.text(p+".effectiveDate", r.EffectiveDate, false, "local")
	c.text(p+".expirationDate", r.ExpirationDate, false, "local")
	c.text(p+".inceptionDate", r.InceptionDate, false, "local")
	c.text(p+".soldDate", r.SoldDate, false, "local")
	if len(r.Modified) > 0 {
		c.fail(p+".modified", "present, but version 1 policies carry no modified")
	}
	if need(c, p+".linesOfBusiness", r.LinesOfBusiness) {
		for i, lob := range *r.LinesOfBusiness {
			q := at(p+".linesOfBusiness", i)
			need(c, q+".code", lob.Code)
			need(c, q+".status", lob.Status)
			need(c, q+".coverages", lob.Coverages)
			need(c, q+".drivers", lob.Drivers)
			need(c, q+".vehicles", lob.Vehicles)
			need(c, q+".locations", lob.Locations)
			if lob.Drivers != nil {
				for k, d := range *lob.Drivers {
					// every key of the sample's drivers is present, "" when there is nothing
					q := at(q+".drivers", k)
					need(c, q+".id", d.ID)
					need(c, q+".firstName", d.FirstName)
					need(c, q+".lastName", d.LastName)
					need(c, q+".relationship", d.Relationship)
					need(c, q+".operatorStatus", d.OperatorStatus)
				}
			}
			if lob.Vehicles != nil {
				for k, v := range *lob.Vehicles {
					q := at(q+".vehicles", k)
					if need(c, q+".coverages", v.Coverages) {
						for n, cv := range *v.Coverages {
							need(c, at(q+".coverages", n)+".code", cv.Code)
							need(c, at(q+".coverages", n)+".premium", cv.Premium)
						}
					}
				}
			}
		}
	}
}
